import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkedFetch, startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { leadResult } from '../support/lead-workflows';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'calls.view'] });
const get = async (path: string, key = owner.key) => {
  const response = await api.request('GET', path, { key });
  return { status: response.status, body: (await response.json()) as any };
};

const campaign = await db.campaign.create({
  data: {
    workspaceId: owner.workspaceId,
    name: 'Results',
    acceptsLeadPush: true,
    status: 'RUNNING',
    dialLadder: QUICK_LADDER,
    callingWindow: ALWAYS_OPEN,
  },
});
const pushed: Array<{ leadId: string; resultUrl: string }> = [];
for (const phone of ['+14155550120', '+14155550125', '+14155550129']) {
  const key = randomUUID();
  const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
    key: owner.key,
    body: { lead: { phone }, idempotencyKey: key },
  });
  pushed.push((await response.json()) as { leadId: string; resultUrl: string });
  await leadResult(temporal.client, campaign.id, key);
}

describe('results', () => {
  it("answers each lead's resultUrl with its status, last outcome and calls", async () => {
    const busy = await checkedFetch(pushed[1]!.resultUrl, { headers: { authorization: `Bearer ${owner.key}` } });
    const body = (await busy.json()) as any;
    expect(body).toMatchObject({
      leadId: pushed[1]!.leadId,
      status: 'failed',
      outcome: 'busy',
      attempts: 3,
      phone: '+14155550125',
    });
    expect(body.calls.map((call: any) => [call.attempt, call.outcome, call.provider])).toEqual([
      [1, 'busy', 'simulated'],
      [2, 'busy', 'simulated'],
      [3, 'busy', 'simulated'],
    ]);
    expect((await get(`/v1/results/${pushed[0]!.leadId}`)).body).toMatchObject({
      status: 'completed',
      outcome: 'answered',
      attempts: 1,
    });
  });

  it('pages results with an opaque cursor, newest first, nextCursor null on the last page', async () => {
    const first = await get(`/v1/results?limit=2&campaignId=${campaign.id}`);
    expect(first.body.items.map((item: any) => item.leadId)).toEqual([pushed[2]!.leadId, pushed[1]!.leadId]);
    const second = await get(`/v1/results?limit=2&campaignId=${campaign.id}&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((item: any) => item.leadId)).toEqual([pushed[0]!.leadId]);
    expect(second.body.nextCursor).toBeNull();
    expect((await get('/v1/results?limit=101')).status).toBe(400);
    expect((await get('/v1/results?cursor=garbage')).body).toMatchObject({
      error: 'invalid_body',
      issues: [{ path: ['cursor'] }],
    });
  });

  it('lists calls with offset pagination and the total', async () => {
    const page = await get(`/calls?limit=2&offset=0&campaignId=${campaign.id}`);
    expect(page.body.total).toBe(5);
    expect(page.body.items).toHaveLength(2);
    const rest = await get(`/calls?limit=2&offset=4&campaignId=${campaign.id}`);
    expect(rest.body.items).toHaveLength(1);
    expect((await get('/calls?limit=201')).status).toBe(400);
  });

  it("keeps another workspace's results out of reach", async () => {
    const other = await createTestWorkspace(db, { scopes: ['campaigns.view', 'calls.view'] });
    expect(await get(`/v1/results/${pushed[0]!.leadId}`, other.key)).toEqual({
      status: 403,
      body: { error: 'forbidden' },
    });
    expect((await get('/v1/results', other.key)).body.items).toEqual([]);
    expect((await get('/calls', other.key)).body).toEqual({ total: 0, items: [] });
  });
});
