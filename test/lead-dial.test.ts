import { describe, expect, it } from 'vitest';
import { createSimulatedTelephony } from '../activities/providers/simulated-telephony';
import { leadWorkflowId } from '../api/services/leads';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { startTestWorker, useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
await startTestWorker(temporal.taskQueue, { db, calls: createSimulatedTelephony() });
const api = await startTestApi({ db, url, temporal });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });

async function createLeadCampaign() {
  const response = await api.request('POST', '/campaigns', { key: owner.key, body: { name: 'Inbound leads', acceptsLeadPush: true } });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

describe('a lead pushed through the API is dialed by the worker', () => {
  it('records the simulated call and the final lead status in PostgreSQL', async () => {
    const campaignId = await createLeadCampaign();
    const response = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
      key: owner.key,
      body: { lead: { phone: '+1 415 555 0123', name: 'Ada', fields: { plan: 'pro' } }, idempotencyKey: 'order-1' },
    });
    expect(response.status).toBe(202);
    const pushed = (await response.json()) as { leadId: string; status: string; deduplicated: boolean; requestId: string };
    expect(pushed).toMatchObject({ status: 'queued', deduplicated: false });
    expect(pushed.requestId).toBe(response.headers.get('x-request-id'));

    const result = await temporal.client.workflow.getHandle(leadWorkflowId(campaignId, 'order-1')).result();
    expect(result).toEqual({ status: 'completed', outcome: 'answered' });

    const lead = await db.lead.findUniqueOrThrow({ where: { id: pushed.leadId }, include: { calls: true } });
    expect(lead.phone).toBe('+14155550123');
    expect(lead.status).toBe('completed');
    expect(lead.calls).toHaveLength(1);
    expect(lead.calls[0]).toMatchObject({ attempt: 1, provider: 'simulated', outcome: 'answered', durationMs: 32_000 });
  });

  it('reports a reused idempotency key as deduplicated and never dials twice', async () => {
    const campaignId = await createLeadCampaign();
    const body = { lead: { phone: '+14155550129' }, idempotencyKey: 'same-key' };
    const first = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, { key: owner.key, body });
    const second = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, { key: owner.key, body });
    expect(first.status).toBe(202);
    expect(second.status).toBe(200);
    const [a, b] = [(await first.json()) as { leadId: string }, (await second.json()) as { leadId: string; deduplicated: boolean }];
    expect(b).toMatchObject({ leadId: a.leadId, deduplicated: true });

    const result = await temporal.client.workflow.getHandle(leadWorkflowId(campaignId, 'same-key')).result();
    expect(result).toEqual({ status: 'failed', outcome: 'invalid_number' });
    expect(await db.call.count({ where: { leadId: a.leadId } })).toBe(1);
    expect(await db.lead.count({ where: { campaignId } })).toBe(1);
  });

  it('refuses an invalid phone with 422 invalid_body and stores nothing', async () => {
    const campaignId = await createLeadCampaign();
    const response = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
      key: owner.key,
      body: { lead: { phone: '0123' }, idempotencyKey: 'bad-phone' },
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_body', issues: [{ path: ['lead', 'phone'] }] });
    expect(await db.lead.count({ where: { campaignId } })).toBe(0);
  });
});
