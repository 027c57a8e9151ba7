import { describe, expect, inject, it } from 'vitest';
import { freePort, waitFor } from '../../scripts/stack/child-process';
import { runStatement } from '../../lib/pg-statement';
import { checkedFetch, startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { startEntryPoint } from '../support/processes';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal, trustProxy: true });

function rateLimitOf(response: Response) {
  const match = /^limit=(\d+), remaining=(\d+), reset=(\d+)$/.exec(response.headers.get('ratelimit') ?? '');
  expect(match, `RateLimit header: ${response.headers.get('ratelimit')}`).not.toBeNull();
  return {
    limit: Number(match![1]),
    remaining: Number(match![2]),
    reset: Number(match![3]),
    policy: response.headers.get('ratelimit-policy'),
  };
}

async function workspaceKey(rateLimitPerMinute: number | null) {
  const workspace = await createTestWorkspace(db, { scopes: ['campaigns.view', 'campaigns.edit'] });
  await db.workspace.update({ where: { id: workspace.workspaceId }, data: { rateLimitPerMinute } });
  return workspace;
}

describe('per-key rate limit', () => {
  it('admits 120 requests in a rolling minute by default, refuses the 121st with 429 and does not process it', async () => {
    const { key, workspaceId } = await workspaceKey(null);
    const first = await api.request('GET', '/campaigns', { key });
    expect(rateLimitOf(first)).toEqual({ limit: 120, remaining: 119, reset: 60, policy: '120;w=60' });
    for (let request = 2; request <= 120; request++) {
      const response = await api.request('GET', '/campaigns', { key });
      expect(response.status).toBe(200);
      expect(rateLimitOf(response).remaining).toBe(120 - request);
    }
    const refused = await api.request('POST', '/campaigns', { key, body: { name: 'the 121st' } });
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: string; requestId: string };
    expect(body).toEqual({ error: 'rate_limited', requestId: refused.headers.get('x-request-id') });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateLimitOf(refused)).toMatchObject({ limit: 120, remaining: 0, policy: '120;w=60' });
    expect(await db.campaign.count({ where: { workspaceId } })).toBe(0);
  });

  it('follows the limit the operator set for the workspace, on /v1 and the workspace API alike', async () => {
    const { key, workspaceId } = await workspaceKey(3);
    const campaign = await db.campaign.create({ data: { workspaceId, name: 'Limit', acceptsLeadPush: true } });
    expect((await api.request('GET', '/campaigns', { key })).status).toBe(200);
    expect((await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, { key, body: {} })).status).toBe(422);
    const third = await api.request('GET', `/campaigns/${campaign.id}`, { key });
    expect(rateLimitOf(third)).toEqual({ limit: 3, remaining: 0, reset: 60, policy: '3;w=60' });
    expect((await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, { key, body: {} })).status).toBe(429);
  });

  it('rolls: a slot frees as soon as the oldest request of the window is 60 seconds old', async () => {
    const { key, keyId } = await workspaceKey(120);
    // 120 requests already admitted: the oldest 58.6 s ago, the others 1 s ago.
    await runStatement(
      url,
      `INSERT INTO "RateLimitBucket" (bucket, hits) VALUES ($1,
      array_prepend(now() - interval '58.6 seconds', array_fill(now() - interval '1 second', ARRAY[119])))`,
      [`key:${keyId}`],
    );
    const refused = await api.request('GET', '/campaigns', { key });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const admitted = await api.request('GET', '/campaigns', { key });
    expect(admitted.status).toBe(200);
    // The oldest request is now one of the 119 made ~2.6 s ago: it leaves the window in ~57.4 s.
    const { remaining, reset } = rateLimitOf(admitted);
    expect(remaining).toBe(0);
    expect(reset).toBeGreaterThanOrEqual(57);
    expect(reset).toBeLessThanOrEqual(58);
    expect((await api.request('GET', '/campaigns', { key })).status).toBe(429);
  });

  it('is shared by two API processes behind one key', async () => {
    const { key } = await workspaceKey(10);
    const servers = await Promise.all([startApiProcess(), startApiProcess()]);
    const statuses: number[] = [];
    for (let request = 0; request < 12; request++) {
      const response = await checkedFetch(`${servers[request % 2]}/campaigns`, {
        headers: { authorization: `Bearer ${key}` },
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
  });
});

describe('failed authentication', () => {
  it('admits 300 failures a minute per client address, then answers 429; other addresses and valid keys are unaffected', async () => {
    const { key } = await workspaceKey(1_000_000);
    const from = (address: string, authorization?: string) =>
      api.request('GET', '/campaigns', {
        headers: { 'x-forwarded-for': address, ...(authorization ? { authorization } : {}) },
      });
    // Successful requests do not count.
    for (let request = 0; request < 20; request++) expect((await from('192.0.2.1', `Bearer ${key}`)).status).toBe(200);
    for (let failure = 1; failure <= 300; failure++) {
      const response = await from('192.0.2.1', failure % 2 ? 'Bearer wsk_wrong' : undefined);
      expect(response.status, `failure ${failure}`).toBe(401);
    }
    const throttled = await from('192.0.2.1', 'Bearer wsk_wrong');
    expect(throttled.status).toBe(429);
    expect(await throttled.json()).toEqual({ error: 'rate_limited', requestId: throttled.headers.get('x-request-id') });
    expect(rateLimitOf(throttled)).toMatchObject({ limit: 300, remaining: 0, policy: '300;w=60' });
    expect((await from('192.0.2.2', 'Bearer wsk_wrong')).status).toBe(401);
    expect((await from('192.0.2.1', `Bearer ${key}`)).status).toBe(200);
  });
});

/** The API entry point as a process of its own: killed when the test that started it finishes. */
async function startApiProcess(): Promise<string> {
  const port = await freePort();
  startEntryPoint(
    'api/main.ts',
    { DATABASE_URL: url, TEMPORAL_ADDRESS: inject('stack').temporalAddress, PORT: String(port) },
    { output: 'ignore' },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    'API process',
    async () => {
      const response = await fetch(`${baseUrl}/health`);
      if (!response.ok) throw new Error(String(response.status));
    },
    30_000,
  );
  return baseUrl;
}
