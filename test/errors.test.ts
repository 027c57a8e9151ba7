import { describe, expect, it } from 'vitest';
import { createDatabase } from '../lib/database';
import { runStatement } from '../lib/pg-statement';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { startTcpProxy } from './support/tcp-proxy';
import { useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const { key, workspaceId } = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
const campaign = await db.campaign.create({ data: { workspaceId, name: 'Errors', acceptsLeadPush: true } });

async function send(method: string, path: string, body: string, contentType = 'application/json') {
  const response = await fetch(`${api.baseUrl}${path}`, {
    method, body, headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, requestId: response.headers.get('x-request-id') };
}

describe('the error contract', () => {
  it('refuses a body over 1 MB with 413 internal_error and stores nothing', async () => {
    const before = await db.campaign.count();
    const response = await send('POST', '/campaigns', JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 1) }));
    expect(response.status).toBe(413);
    expect(response.body.error).toBe('internal_error');
    expect(await db.campaign.count()).toBe(before);
  });

  it('refuses a body that is not JSON with 400 internal_error, whatever its content type says', async () => {
    expect(await send('POST', '/campaigns', '{"name": ')).toMatchObject({ status: 400, body: { error: 'internal_error' } });
    expect(await send('POST', '/campaigns', 'name=x', 'application/x-www-form-urlencoded')).toMatchObject({ status: 400, body: { error: 'internal_error' } });
  });

  it('reports failed validation as invalid_body with issues: 400, and 422 on the single lead push', async () => {
    const before = await db.campaign.count();
    const campaignBody = await send('POST', '/campaigns', JSON.stringify({ name: '', channel: 'FAX' }));
    expect(campaignBody.status).toBe(400);
    expect(campaignBody.body).toMatchObject({ error: 'invalid_body' });
    expect((campaignBody.body.issues as Array<{ path: string[] }>).map((issue) => issue.path[0]).sort()).toEqual(['channel', 'name']);
    expect(await db.campaign.count()).toBe(before);

    const lead = await send('POST', `/v1/campaigns/${campaign.id}/leads`, JSON.stringify({ lead: { phone: '+14155550120' } }));
    expect(lead).toMatchObject({ status: 422, body: { error: 'invalid_body', issues: [{ path: ['idempotencyKey'] }] } });
    expect(await db.lead.count()).toBe(0);
  });

  it('puts a request id on every response', async () => {
    const responses = await Promise.all([
      fetch(`${api.baseUrl}/health`), fetch(`${api.baseUrl}/campaigns`), fetch(`${api.baseUrl}/nowhere`, { headers: { authorization: `Bearer ${key}` } }),
    ]);
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(3);
    expect(responses[2]!.status).toBe(404);
  });

  it('answers an unexpected failure with 500 internal_error and nothing of the cause', async () => {
    await runStatement(url, 'ALTER TABLE "Campaign" RENAME TO "CampaignHidden"');
    try {
      const response = await fetch(`${api.baseUrl}/campaigns`, { headers: { authorization: `Bearer ${key}` } });
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
});
