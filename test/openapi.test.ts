import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { routes } from '../api/routes';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { useTemporalClient } from './support/temporal';

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
    const broken = await new Validator().validate({ ...document, paths: { '/x': { get: { responses: 'none' } } } } as never);
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
      const published = document.paths[route.path]![route.method]!.requestBody.content['application/json'].schema;
      const { $schema: _ignored, ...expected } = z.toJSONSchema(route.body!, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      expect(published, `${route.method} ${route.path}`).toEqual(expected);
    }
    const leadPush = document.paths['/v1/campaigns/{campaignId}/leads']!.post!;
    expect(leadPush.requestBody.content['application/json'].schema.required).toEqual(['lead']);
    expect(leadPush.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]));
    expect(Object.keys(leadPush.responses)).toEqual(expect.arrayContaining(['200', '202', '422', '413']));
  });

  it('publishes the decisions taken where the spec is silent', () => {
    for (const decision of ['plan_required', 'feature_not_enabled', '202', 'not_implemented', 'api_key_not_scoped']) {
      expect(document.info.description).toContain(decision);
    }
  });
});
