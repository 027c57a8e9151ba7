import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ERROR_STATUS } from '../api/http/error-statuses';
import type { RouteDefinition } from '../api/http/route';
import { requestBodySchema } from '../api/openapi/build-openapi';
import { declaredResponses, unroutedResponses } from '../api/openapi/declared-responses';
import { ErrorCode } from '../lib/error-codes';
import { routes } from '../api/routes';
import { checkedFetch, startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const api = await startTestApi({ db, url, temporal: await useTemporalClient() });

const response = await api.request('GET', '/v1/openapi.json');
const document = (await response.json()) as {
  openapi: string;
  info: { version: string; description: string };
  paths: Record<string, Record<string, Record<string, any>>>;
};

describe('GET /v1/openapi.json', () => {
  it('serves a valid OpenAPI 3.1 description, version 1.0.0, without a key', async () => {
    expect(response.status).toBe(200);
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const broken = await new Validator().validate({
      ...document,
      paths: { '/x': { get: { responses: 'none' } } },
    } as never);
    expect(broken.valid).toBe(false);
  });

  it('describes every route with its security requirement, required permission and error responses', () => {
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      if ('public' in route.access) {
        expect(operation!.security).toEqual([]);
        continue;
      }
      expect(operation!.security).toEqual([{ bearerAuth: [] }]);
      expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining(['401', '403', '429', '503']));
      if ('keysRefused' in route.access) expect(operation!['x-refuses-api-keys']).toBe(true);
      else expect(operation!['x-required-permission']).toBe(route.access.permission);
    }
  });

  it('takes request bodies from the schemas the routes validate with', () => {
    for (const route of routes.filter((candidate) => candidate.body)) {
      // As each route is sent: JSON, or a form for a carrier's callbacks (bodyMediaType).
      const published =
        document.paths[route.path]![route.method]!.requestBody.content[route.bodyMediaType ?? 'application/json']
          .schema;
      expect(published, `${route.method} ${route.path}`).toEqual(requestBodySchema(route.body!));
    }
    const leadPush = document.paths['/v1/campaigns/{campaignId}/leads']!.post!;
    expect(leadPush.requestBody.content['application/json'].schema.required).toEqual(['lead']);
    // With the rule every route applies to its input: no NUL in a string, free-form values as StorableJson.
    expect(
      document.paths['/campaigns']!.post!.requestBody.content['application/json'].schema.properties.name.pattern,
    ).toBe('^[^\\u0000]*$');
    expect(
      leadPush.requestBody.content['application/json'].schema.properties.lead.properties.fields.additionalProperties,
    ).toEqual({ $ref: '#/components/schemas/StorableJson' });
    expect(
      leadPush.parameters.find((parameter: { name: string }) => parameter.name === 'campaignId').schema.pattern,
    ).toBe('^[^\\u0000]*$');
    expect(leadPush.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
    expect(Object.keys(leadPush.responses)).toEqual(expect.arrayContaining(['200', '202', '422', '413']));
  });

  it('publishes the decisions taken where the spec is silent', () => {
    for (const decision of [
      'plan_required',
      'feature_not_enabled',
      '202',
      'api_key_not_scoped',
      'method_not_allowed',
      'Request bodies',
      'U+0000',
      'Cursors',
    ]) {
      expect(document.info.description).toContain(decision);
    }
  });

  it('lists, per status, the error codes each operation can answer, in the schema of its body', () => {
    const codesOf = (path: string, method: string, status: number) =>
      document.paths[path]![method]!.responses[status]?.content['application/json'].schema.allOf[1].properties.error
        .enum;
    for (const action of ['start', 'pause', 'resume', 'stop']) {
      expect(codesOf(`/campaigns/{id}/${action}`, 'post', 409)).toEqual(
        action === 'start' || action === 'resume'
          ? [
              'invalid_campaign_transition',
              'agent_deleted',
              'whatsapp_campaign_not_configured',
              'no_carrier_connection',
              'no_whatsapp_connection',
            ]
          : ['invalid_campaign_transition'],
      );
      expect(codesOf(`/campaigns/{id}/${action}`, 'post', 503)).toEqual(
        expect.arrayContaining(['database_unavailable', 'temporal_unavailable']),
      );
    }
    expect(codesOf('/campaigns/{id}', 'patch', 409)).toEqual(['campaign_stopped', 'no_carrier_connection']);
    expect(codesOf('/v1/campaigns/{campaignId}/leads/batch', 'post', 409)).toEqual([
      'campaign_not_accepting_leads',
      'workflow_not_published',
    ]);
    expect(codesOf('/v1/campaigns/{campaignId}/leads', 'post', 422)).toEqual(['invalid_body']);
    expect(codesOf('/v1/campaigns/{campaignId}/leads', 'post', 429)).toEqual([
      'rate_limited',
      'journey_live_cap_reached',
    ]);
    for (const path of [
      '/calls',
      '/v1/results',
      '/campaigns/{id}/leads',
      '/campaigns/{id}/api-logs',
      '/workflows/{id}/runs',
      '/result-webhooks/deliveries',
    ]) {
      expect(codesOf(path, 'get', 400), path).toEqual(['invalid_body']);
    }
    expect(codesOf('/v1/whoami', 'get', 403)).toEqual([
      'api_key_owner_inactive',
      'workspace_pending_approval',
      'workspace_suspended',
    ]);
    expect(codesOf('/workflows', 'get', 403)).toContain('feature_not_enabled');
    expect(codesOf('/campaigns/{id}/exports/{exportId}/file', 'get', 410)).toEqual(['export_expired']);
    expect(codesOf('/campaigns/{id}/sheet', 'post', 409)).toEqual(['sheet_exists']);
    expect(document.paths['/v1/whoami']!.get!.responses[400]).toBeUndefined();
    expect(document.paths['/health']!.get!.responses[401]).toBeUndefined();
    // Every error answer of every operation carries codes, and only codes of the one list.
    for (const route of routes) {
      for (const [status, answer] of Object.entries(declaredResponses(route))) {
        if (Number(status) >= 400 && route.path !== '/health')
          expect(answer.errorCodes?.length, `${route.method} ${route.path} ${status}`).toBeGreaterThan(0);
      }
    }
  });

  it('marks every request body required, and says what a cursor not handed out gets', () => {
    const exports = document.paths['/campaigns/{id}/exports']!.post!;
    expect(exports.requestBody.required).toBe(true);
    expect(Object.keys(exports.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '413']));
    expect(Object.keys(exports.responses[200].content).sort()).toEqual([
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'text/csv',
    ]);
    for (const route of routes.filter((candidate) => candidate.body))
      expect(document.paths[route.path]![route.method]!.requestBody.required).toBe(true);
    const cursor = document.paths['/v1/results']!.get!.parameters.find(
      (parameter: { name: string }) => parameter.name === 'cursor',
    );
    expect(cursor.description).toMatch(/400 invalid_body/);
  });
});

const { key } = await createTestWorkspace(db, { scopes: ['campaigns.view', 'campaigns.edit'] });
const forbidden = await createTestWorkspace(db, { scopes: ['calls.view'] });
await api.request('POST', '/campaigns', { key, body: { name: 'Checked' } });

describe('the check of every response against its declaration (test/support/api.ts)', () => {
  const listCampaigns = routes.find((route) => route.method === 'get' && route.path === '/campaigns')!;
  const withRoute = (replacement: RouteDefinition) =>
    routes.map((route) => (route === listCampaigns ? replacement : route));
  const authorized = { headers: { authorization: `Bearer ${key}` } };

  it('passes a response as declared', async () => {
    expect((await checkedFetch(`${api.baseUrl}/campaigns`, authorized)).status).toBe(200);
  });

  it('fails a body its schema refuses', async () => {
    const drifted = withRoute({
      ...listCampaigns,
      responses: { 200: { description: 'x', schema: z.array(z.object({ id: z.number() })) } },
    });
    await expect(checkedFetch(`${api.baseUrl}/campaigns`, authorized, drifted)).rejects.toThrow(
      /not as declared[\s\S]*body\.0\.id/,
    );
  });

  it('fails a body with a member its schema does not declare', async () => {
    const drifted = withRoute({
      ...listCampaigns,
      responses: { 200: { description: 'x', schema: z.array(z.looseObject({}).pipe(z.object({ id: z.string() }))) } },
    });
    await expect(checkedFetch(`${api.baseUrl}/campaigns`, authorized, drifted)).rejects.toThrow(
      /not exactly what its schema describes: 0\.name/,
    );
  });

  it('fails a status the route does not declare, and an error code its status does not list', async () => {
    await expect(
      checkedFetch(`${api.baseUrl}/campaigns`, authorized, withRoute({ ...listCampaigns, responses: {} })),
    ).rejects.toThrow(/status 200 is not declared/);
    const refused = { headers: { authorization: `Bearer ${forbidden.key}` } };
    expect((await checkedFetch(`${api.baseUrl}/campaigns`, refused)).status).toBe(403);
    await expect(
      checkedFetch(`${api.baseUrl}/campaigns`, refused, withRoute({ ...listCampaigns, access: { permission: null } })),
    ).rejects.toThrow(/body\.error: Invalid option/);
  });

  it('fails a request no route takes unless it is answered 404, or 405 with Allow', async () => {
    const without = routes.filter((route) => route !== listCampaigns);
    await expect(checkedFetch(`${api.baseUrl}/campaigns`, authorized, without)).rejects.toThrow(
      /status 200 is not declared \(declared: 400, 401, 403, 405/,
    );
  });
});

/**
 * Where an operation declares a code with another status than the table's, on purpose: a route table's own
 * answer (an ApiError in api/<feature>/routes.ts). Each entry is a decision; keep the list short.
 */
const ROUTES_OWN_STATUSES: Record<string, Partial<Record<ErrorCode, number[]>>> = {
  // A lead not stored is the spec's retryable 503, whatever failed.
  'POST /v1/campaigns/{campaignId}/leads': { internal_error: [503] },
};

/** The statuses an operation may answer a code with: the table's, and the few decided elsewhere. */
function statusesOf(operation: string, code: ErrorCode, validationStatus = 400): number[] {
  const statuses = [ERROR_STATUS[code] ?? NaN, ...(ROUTES_OWN_STATUSES[operation]?.[code] ?? [])];
  // The route decides the status of failed validation (path and query: 400; the body: its validationStatus).
  if (code === ErrorCode.invalid_body) statuses.push(400, validationStatus);
  // Not refusals: the error handler's answers to a body it cannot read (not JSON: 400) or that is over 1 MB (413).
  if (code === ErrorCode.internal_error) statuses.push(400, 413);
  return statuses;
}

describe('one status per error code (api/http/error-statuses.ts)', () => {
  it('gives every code of lib/error-codes.ts a status, or says it is never an HTTP answer', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual(Object.values(ErrorCode).sort());
    for (const [code, status] of Object.entries(ERROR_STATUS))
      if (status !== null) expect(status >= 400 && status < 600, code).toBe(true);
  });

  it('agrees with the status every operation of the OpenAPI description declares for each of its codes', () => {
    const declared = new Set<ErrorCode>();
    const disagreements: string[] = [];
    const check = (
      operation: string,
      responses: Record<string, { errorCodes?: readonly ErrorCode[] }>,
      validationStatus?: number,
    ) => {
      for (const [status, answer] of Object.entries(responses))
        for (const code of answer.errorCodes ?? []) {
          declared.add(code);
          if (!statusesOf(operation, code, validationStatus).includes(Number(status)))
            disagreements.push(`${operation}: ${status} ${code} (the table: ${ERROR_STATUS[code]})`);
        }
    };
    for (const route of routes) {
      const operation = `${route.method.toUpperCase()} ${route.path}`;
      check(operation, declaredResponses(route), route.validationStatus);
      // The published description says the same as the declarations.
      for (const [status, answer] of Object.entries(declaredResponses(route)))
        if (answer.errorCodes)
          expect(
            document.paths[route.path]![route.method]!.responses[status].content['application/json'].schema.allOf[1]
              .properties.error.enum,
            `${operation} ${status}`,
          ).toEqual(answer.errorCodes);
    }
    check('a path no route takes', unroutedResponses(false));
    check('a method a known path does not take', unroutedResponses(true));
    expect(disagreements).toEqual([]);
    // A code that is never an HTTP answer is declared by no operation.
    const neverAnswered = Object.values(ErrorCode).filter((code) => ERROR_STATUS[code] === null);
    expect(neverAnswered.filter((code) => declared.has(code))).toEqual([]);
  });

  it('notices a route that declares a code with another status than the table', () => {
    expect(statusesOf('PATCH /campaigns/{id}', ErrorCode.campaign_stopped)).toEqual([409]);
    expect(statusesOf('PATCH /campaigns/{id}', ErrorCode.campaign_stopped)).not.toContain(422);
    expect(statusesOf('POST /v1/campaigns/{campaignId}/leads', ErrorCode.invalid_body, 422)).toContain(422);
    expect(statusesOf('POST /campaigns', ErrorCode.invalid_body)).not.toContain(422);
    expect(statusesOf('POST /campaigns', ErrorCode.internal_error)).not.toContain(503);
  });
});
