import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Request, Response } from 'express';
import { errorHandler } from '../api/http/error-handler';
import { ApiError } from '../api/http/api-error';
import { createDatabase } from '../lib/database';
import { ErrorCode } from '../lib/error-codes';
import { Refusal } from '../lib/refusal';
import { runStatement } from '../lib/pg-statement';
import { checkedFetch, startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { journey, publishedJourney } from './support/journeys';
import { startTcpProxy } from './support/tcp-proxy';
import { useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const { key, workspaceId } = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'intel.view'],
  settings: { plan: 'basic' },
});
const campaign = await db.campaign.create({ data: { workspaceId, name: 'Errors', acceptsLeadPush: true } });

/** A raw body, sent as is; the response is checked against its route's declarations like every other. */
async function send(
  method: string,
  path: string,
  body: string | undefined,
  contentType = 'application/json',
  headers: Record<string, string> = {},
) {
  const response = await checkedFetch(`${api.baseUrl}${path}`, {
    method,
    body,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType, ...headers },
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    requestId: response.headers.get('x-request-id'),
    headers: response.headers,
  };
}

const issuePaths = (body: Record<string, unknown>) =>
  (body.issues as Array<{ path: string[] }>).map((issue) => issue.path);

describe('the error contract', () => {
  it('refuses a body over 1 MB with 413 internal_error and stores nothing', async () => {
    const before = await db.campaign.count();
    const response = await send('POST', '/campaigns', JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 1) }));
    expect(response.status).toBe(413);
    expect(response.body.error).toBe('internal_error');
    expect(await db.campaign.count()).toBe(before);
  });

  it('refuses a body that is not JSON with 400 internal_error, whatever its content type says', async () => {
    expect(await send('POST', '/campaigns', '{"name": ')).toMatchObject({
      status: 400,
      body: { error: 'internal_error' },
    });
    expect(await send('POST', '/campaigns', 'name=x', 'application/x-www-form-urlencoded')).toMatchObject({
      status: 400,
      body: { error: 'internal_error' },
    });
  });

  it('reports failed validation as invalid_body with issues: 400, and 422 on the single lead push', async () => {
    const before = await db.campaign.count();
    const campaignBody = await send('POST', '/campaigns', JSON.stringify({ name: '', channel: 'FAX' }));
    expect(campaignBody.status).toBe(400);
    expect(campaignBody.body).toMatchObject({ error: 'invalid_body' });
    expect((campaignBody.body.issues as Array<{ path: string[] }>).map((issue) => issue.path[0]).sort()).toEqual([
      'channel',
      'name',
    ]);
    expect(await db.campaign.count()).toBe(before);

    const lead = await send(
      'POST',
      `/v1/campaigns/${campaign.id}/leads`,
      JSON.stringify({ lead: { phone: '+14155550120' } }),
    );
    expect(lead).toMatchObject({
      status: 422,
      body: { error: 'invalid_body', issues: [{ path: ['idempotencyKey'] }] },
    });
    expect(await db.lead.count()).toBe(0);
  });

  it('puts a request id on every response', async () => {
    const responses = await Promise.all([
      checkedFetch(`${api.baseUrl}/health`),
      checkedFetch(`${api.baseUrl}/campaigns`),
      checkedFetch(`${api.baseUrl}/nowhere`, { headers: { authorization: `Bearer ${key}` } }),
    ]);
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(3);
    expect(responses[2]!.status).toBe(404);
  });

  it('answers an unexpected failure with 500 internal_error and nothing of the cause', async () => {
    await runStatement(url, 'ALTER TABLE "Campaign" RENAME TO "CampaignHidden"');
    try {
      const response = await checkedFetch(`${api.baseUrl}/campaigns`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(500);
      expect(await response.text()).toBe('{"error":"internal_error"}');
    } finally {
      await runStatement(url, 'ALTER TABLE "CampaignHidden" RENAME TO "Campaign"');
    }
  });

  it('answers 503 database_unavailable while PostgreSQL is down, and recovers by itself', async () => {
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const proxied = new URL(url);
    proxied.port = String(proxy.port);
    const proxiedDb = createDatabase(proxied.toString());
    const proxiedApi = await startTestApi({ db: proxiedDb, url: proxied.toString(), temporal });
    const list = () => proxiedApi.request('GET', '/campaigns', { key });
    expect((await list()).status).toBe(200);

    await proxy.cut();
    const down = await list();
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ error: 'database_unavailable' });

    await proxy.restore();
    let recovered = await list();
    for (let attempt = 0; recovered.status !== 200 && attempt < 20; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      recovered = await list();
    }
    expect(recovered.status).toBe(200);
    await proxiedDb.$disconnect();
  });

  it('refuses an unsupported method on a known path with 405 method_not_allowed and Allow, after the door', async () => {
    for (const [method, path, allow] of [
      ['PUT', '/campaigns', 'POST, GET, HEAD'],
      ['PUT', `/campaigns/${campaign.id}`, 'GET, HEAD, PATCH, DELETE'],
      ['GET', `/campaigns/${campaign.id}/start`, 'POST'],
      ['QUERY', '/health', 'GET, HEAD'],
      // A concrete path is not its templated sibling (/phone-numbers/{id} takes PATCH): as OpenAPI matches.
      ['PATCH', '/phone-numbers/purchase', 'POST'],
      ['GET', '/phone-numbers/purchase', 'POST'],
    ] as const) {
      const response = await checkedFetch(`${api.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get('allow')!.split(', ').sort()).toEqual(allow.split(', ').sort());
      expect(await response.json()).toEqual({ error: 'method_not_allowed' });
    }
    const unauthenticated = await checkedFetch(`${api.baseUrl}/campaigns`, { method: 'PUT' });
    expect(unauthenticated.status).toBe(401);
    const unknown = await checkedFetch(`${api.baseUrl}/campaigns/${campaign.id}/nowhere`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'not_found' });
  });

  it('requires the body of every route that takes one: absent or empty is invalid_body, {} is a body', async () => {
    const before = await db.campaign.count();
    for (const body of [undefined, '']) {
      const response = await send('POST', '/campaigns', body);
      expect(response).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
      expect(issuePaths(response.body)).toEqual([[]]);
    }
    expect(await send('POST', '/campaigns', 'null')).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(await send('POST', `/v1/campaigns/${campaign.id}/leads`, undefined)).toMatchObject({
      status: 422,
      body: { error: 'invalid_body', issues: [{ path: [] }] },
    });
    expect(await send('POST', `/campaigns/${campaign.id}/exports`, undefined)).toMatchObject({
      status: 400,
      body: { error: 'invalid_body', issues: [{ path: [] }] },
    });
    expect(await db.campaign.count()).toBe(before);
    expect(await db.lead.count()).toBe(0);
    // A route without a body reads none: what it was sent cannot refuse it.
    const withIgnoredBody = await send('GET', '/campaigns', undefined);
    expect(withIgnoredBody.status).toBe(200);
  });

  it('refuses strings PostgreSQL cannot store (NUL, unpaired surrogates) as invalid_body naming the field, on every route alike', async () => {
    const before = await db.campaign.count();
    const nul = await send('POST', '/campaigns', '{"name": "a\\u0000b"}');
    expect(nul).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(nul.body)).toEqual([['name']]);
    const surrogate = await send('POST', '/campaigns', '{"name": "ok", "agentId": "\\ud800"}');
    expect(surrogate).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(surrogate.body)).toEqual([['agentId']]);
    expect(await db.campaign.count()).toBe(before);

    // Deep inside free-form JSON (a jsonb column), in an object key, on the lead push (422).
    const lead = (fields: string) =>
      `{"idempotencyKey": "k-1", "lead": {"phone": "+14155550120", "fields": ${fields}}}`;
    const inValue = await send(
      'POST',
      `/v1/campaigns/${campaign.id}/leads`,
      lead('{"notes": ["fine", {"deep": "\\udc00x"}]}'),
    );
    expect(inValue).toMatchObject({ status: 422, body: { error: 'invalid_body' } });
    expect(issuePaths(inValue.body)).toEqual([['lead', 'fields', 'notes', '1', 'deep']]);
    const inKey = await send('POST', `/v1/campaigns/${campaign.id}/leads`, lead('{"a\\u0000": 1}'));
    expect(inKey).toMatchObject({ status: 422, body: { error: 'invalid_body' } });
    expect(issuePaths(inKey.body)).toEqual([['lead', 'fields', 'a\u0000']]);
    expect(await db.lead.count()).toBe(0);

    // In the query and in a path parameter.
    const query = await send('GET', `/campaigns/${campaign.id}/api-logs?cursor=%00`, undefined);
    expect(query).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(query.body)).toEqual([['cursor']]);
    const param = await send('GET', '/campaigns/%00', undefined);
    expect(param).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(param.body)).toEqual([['id']]);
    const undecodable = await send('GET', '/campaigns/%ED%A0%80', undefined);
    expect(undecodable).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(undecodable.body)).toEqual([['path']]);
  });

  it('refuses numbers out of range and nesting deeper than 32 levels, and still accepts what fits', async () => {
    const lead = (fields: string, key: string) =>
      `{"idempotencyKey": "${key}", "lead": {"phone": "+14155550120", "fields": ${fields}}}`;
    const huge = await send('POST', `/v1/campaigns/${campaign.id}/leads`, lead('{"n": 1e400}', 'n-1'));
    expect(huge).toMatchObject({ status: 422, body: { error: 'invalid_body' } });
    expect(issuePaths(huge.body)).toEqual([['lead', 'fields', 'n']]);
    const tooDeep = await send(
      'POST',
      `/v1/campaigns/${campaign.id}/leads`,
      lead(`${'['.repeat(40)}${']'.repeat(40)}`, 'deep-1'),
    );
    expect(tooDeep).toMatchObject({ status: 422, body: { error: 'invalid_body' } });
    expect(issuePaths(tooDeep.body)[0]!.length).toBe(32);
    const veryDeep = await send(
      'POST',
      `/v1/campaigns/${campaign.id}/leads`,
      lead(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'deep-2'),
    );
    expect(veryDeep.status).toBeGreaterThanOrEqual(400);
    expect(veryDeep.status).toBeLessThan(500);
    expect(await db.lead.count()).toBe(0);
    const fits = await send(
      'POST',
      `/v1/campaigns/${campaign.id}/leads`,
      lead(`{"n": 12345678901234567890, "d": ${'['.repeat(20)}${']'.repeat(20)}}`, 'fits-1'),
    );
    expect(fits.status).toBe(202);

    const offset = await send('GET', `/campaigns/${campaign.id}/leads?offset=2147483648`, undefined);
    expect(offset).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(offset.body)).toEqual([['offset']]);
    // Found by the fuzzer: `offset=` read as 0. Only decimal digits are a whole number.
    for (const query of ['offset=', 'offset=%20', 'offset=0x10', 'limit=1e2', 'limit=1&limit=2']) {
      const notANumber = await send('GET', `/campaigns/${campaign.id}/leads?${query}`, undefined);
      expect(notANumber, query).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    }
    expect((await send('GET', `/campaigns/${campaign.id}/leads?offset=0&limit=200`, undefined)).status).toBe(200);
    const maxMaxConcurrentCalls = await send('POST', '/campaigns', '{"name": "x", "maxConcurrentCalls": 2147483648}');
    expect(issuePaths(maxMaxConcurrentCalls.body)).toEqual([['maxConcurrentCalls']]);
    // Instants PostgreSQL cannot store though ISO 8601 can write them: year 0, or past 9999 once in UTC.
    for (const from of ['0000-06-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:00:00-02:00']) {
      const instant = await send('POST', `/campaigns/${campaign.id}/exports`, JSON.stringify({ from }));
      expect(instant, from).toMatchObject({
        status: 400,
        body: { error: 'invalid_body', issues: [{ path: ['from'] }] },
      });
    }
    // Found by the fuzzer: an id that is not a uuid reached a uuid column (500).
    const notAnId = await send('PATCH', `/campaigns/${campaign.id}`, '{"workflowId": ""}');
    expect(notAnId).toMatchObject({ status: 400, body: { error: 'invalid_body' } });
    expect(issuePaths(notAnId.body)).toEqual([['workflowId']]);
  });

  it('refuses a cursor the list did not hand out, however it is made, with 400 invalid_body', async () => {
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of [
      'nonsense',
      forged(['2026-01-01T00:00:00.000Z', 'not-a-uuid']),
      forged(['+275760-09-13T00:00:00.000Z', campaign.id]),
      forged({}),
    ]) {
      const response = await send('GET', `/v1/results?cursor=${encodeURIComponent(cursor)}`, undefined);
      expect(response, cursor).toMatchObject({
        status: 400,
        body: { error: 'invalid_body', issues: [{ path: ['cursor'] }] },
      });
    }
  });

  it('answers a body in a charset or encoding it cannot read with 400 internal_error', async () => {
    expect(await send('POST', '/campaigns', '{"name": "x"}', 'application/json; charset=latin1')).toMatchObject({
      status: 400,
      body: { error: 'internal_error' },
    });
    expect(
      await send('POST', '/campaigns', '{"name": "x"}', 'application/json', { 'content-encoding': 'compress' }),
    ).toMatchObject({ status: 400, body: { error: 'internal_error' } });
  });

  it('answers 409, not 500, to a decision on a run whose workflow is not in Temporal (not started yet, or ended outside the API)', async () => {
    const operator = await createTestWorkspace(db, {
      scopes: ['workflows.run', 'workflows.recover'],
      settings: { features: ['workflows'] },
    });
    const published = await publishedJourney(
      db,
      operator.workspaceId,
      journey(
        [
          { id: 'start', type: 'start' },
          { id: 'done', type: 'end' },
        ],
        [['start', 'done']],
      ),
    );
    const runId = randomUUID();
    await db.journeyRun.create({
      data: {
        id: runId,
        workspaceId: operator.workspaceId,
        journeyId: published.id,
        revision: 1,
        temporalWorkflowId: `journey-run-never-started-${runId}`,
        trigger: { phone: null, name: null, fields: {} },
        startedBy: 'lead_push',
      },
    });
    const decide = (action: string, body?: unknown) =>
      checkedFetch(`${api.baseUrl}/workflows/${published.id}/runs/${runId}/${action}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator.key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const cancel = await decide('cancel');
    expect(cancel.status).toBe(409);
    expect(await cancel.json()).toMatchObject({ error: 'run_not_running' });
    const recover = await decide('recover', { action: 'end' });
    expect(recover.status).toBe(409);
    expect(await recover.json()).toMatchObject({ error: 'run_not_awaiting_decision' });
  });
});

describe('refusals at the edge (api/http/error-handler.ts, api/http/error-statuses.ts)', () => {
  /** What the error handler answers to a failure on a route whose validation answers validationStatus. */
  function answer(error: unknown, validationStatus?: number) {
    const sent: { status?: number; body?: unknown; headers: Record<string, string> } = { headers: {} };
    const res = {
      headersSent: false,
      locals: { validationStatus },
      set(headers: Record<string, string>) {
        Object.assign(sent.headers, headers);
        return this;
      },
      status(status: number) {
        sent.status = status;
        return this;
      },
      json(body: unknown) {
        sent.body = body;
        return this;
      },
    };
    errorHandler(error, { method: 'GET', path: '/x' } as Request, res as unknown as Response, () => {});
    return sent;
  }

  it("answers a refusal with its code's status, { error: code, ...extras }, and Retry-After when it says when", () => {
    expect(answer(new Refusal(ErrorCode.campaign_not_draft, { status: 'RUNNING' }))).toEqual({
      status: 409,
      body: { error: 'campaign_not_draft', status: 'RUNNING' },
      headers: {},
    });
    expect(answer(new Refusal(ErrorCode.export_expired))).toMatchObject({ status: 410 });
    expect(answer(new Refusal(ErrorCode.rate_limited, { requestId: 'r' }, { retryAfterSeconds: 7 }))).toEqual({
      status: 429,
      body: { error: 'rate_limited', requestId: 'r' },
      headers: { 'Retry-After': '7' },
    });
  });

  it("answers invalid_body with the route's validation status", () => {
    expect(answer(new Refusal(ErrorCode.invalid_body, { issues: [] }))).toMatchObject({ status: 400 });
    expect(answer(new Refusal(ErrorCode.invalid_body, { issues: [] }), 422)).toMatchObject({ status: 422 });
  });

  it('answers a refusal with a code that is never an HTTP answer as the bug it is: 500, nothing of it told', () => {
    expect(answer(new Refusal(ErrorCode.lead_not_found, { leadId: 'x' }))).toEqual({
      status: 500,
      body: { error: 'internal_error' },
      headers: {},
    });
  });

  it("answers a route table's own ApiError with its status and headers", () => {
    expect(answer(new ApiError(503, ErrorCode.internal_error, { retryable: true }, { 'Retry-After': '5' }))).toEqual({
      status: 503,
      body: { error: 'internal_error', retryable: true },
      headers: { 'Retry-After': '5' },
    });
  });
});
