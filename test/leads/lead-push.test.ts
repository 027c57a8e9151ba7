import { describe, expect, it } from 'vitest';
import { LEAD_FIELD_LIMITS } from '../../lib/campaigns/lead-fields';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, unreachableTemporal, useTemporalClient } from '../support/temporal';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { createTestWorkspace } from '../support/workspace';
import { leadResult } from '../support/lead-workflows';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });

/** One attempt per lead, at any hour: these tests are about accepting leads, not the ladder. */
async function createLeadCampaign(fields: Record<string, unknown> = {}) {
  return db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Inbound leads',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      ...fields,
    },
  });
}
const push = (campaignId: string, body: unknown, headers: Record<string, string> = {}) =>
  api.request('POST', `/v1/campaigns/${campaignId}/leads`, { key: owner.key, body, headers });
const pushBatch = (campaignId: string, leads: unknown[], key = owner.key) =>
  api.request('POST', `/v1/campaigns/${campaignId}/leads/batch`, { key, body: { leads } });
const finished = (campaignId: string, idempotencyKey: string) =>
  leadResult(temporal.client, campaignId, idempotencyKey);

describe('POST /v1/campaigns/{campaignId}/leads', () => {
  it('queues a new lead (202), dials it through the worker, and records the call in PostgreSQL', async () => {
    const campaign = await createLeadCampaign();
    const response = await push(campaign.id, {
      lead: { phone: '+1 415 555 0123', name: 'Ada', fields: { plan: 'pro' } },
      idempotencyKey: 'order-1',
    });
    expect(response.status).toBe(202);
    const pushed = (await response.json()) as Record<string, any>;
    expect(pushed).toMatchObject({ status: 'queued', deduplicated: false, warnings: { undeclaredVariables: [] } });
    expect(pushed.requestId).toBe(response.headers.get('x-request-id'));
    expect(pushed.resultUrl).toBe(`${api.baseUrl}/v1/results/${pushed.leadId}`);

    expect(await finished(campaign.id, 'order-1')).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    const lead = await db.lead.findUniqueOrThrow({ where: { id: pushed.leadId }, include: { calls: true } });
    expect(lead).toMatchObject({ phone: '+14155550123', status: 'completed', fields: { plan: 'pro' } });
    expect(lead.calls).toHaveLength(1);
    expect(lead.calls[0]).toMatchObject({ attempt: 1, provider: 'simulated', outcome: 'answered', durationMs: 32_000 });
  });

  it('answers 50 concurrent pushes of one key with one lead, one workflow and one dial', async () => {
    const campaign = await createLeadCampaign();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => push(campaign.id, { lead: { phone: '+14155550121' }, idempotencyKey: 'burst' })),
    );
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as Array<{
      leadId: string;
      deduplicated: boolean;
    }>;
    expect(responses.map((response) => response.status).sort()).toEqual([...Array(49).fill(200), 202]);
    expect(new Set(bodies.map((body) => body.leadId)).size).toBe(1);
    expect(bodies.filter((body) => !body.deduplicated)).toHaveLength(1);
    await finished(campaign.id, 'burst');
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(1);
    expect(await db.call.count({ where: { leadId: bodies[0]!.leadId } })).toBe(1);
    const runs = temporal.client.workflow.list({ query: `WorkflowId = "${leadWorkflowId(campaign.id, 'burst')}"` });
    let count = 0;
    for await (const _run of runs) count++;
    expect(count).toBe(1);
  });

  it('dials the same phone again under a different key', async () => {
    const campaign = await createLeadCampaign();
    const first = (await (
      await push(campaign.id, { lead: { phone: '+14155550122' }, idempotencyKey: 'a' })
    ).json()) as { leadId: string };
    const second = (await (
      await push(campaign.id, { lead: { phone: '+14155550122' }, idempotencyKey: 'b' })
    ).json()) as { leadId: string };
    expect(first.leadId).not.toBe(second.leadId);
    await Promise.all([finished(campaign.id, 'a'), finished(campaign.id, 'b')]);
    expect(await db.call.count({ where: { lead: { campaignId: campaign.id } } })).toBe(2);
  });

  it('takes the key from the Idempotency-Key header, and refuses a body key that differs or no key at all', async () => {
    const campaign = await createLeadCampaign();
    const byHeader = await push(campaign.id, { lead: { phone: '+14155550124' } }, { 'idempotency-key': 'hdr' });
    expect(byHeader.status).toBe(202);
    const same = await push(
      campaign.id,
      { lead: { phone: '+14155550124' }, idempotencyKey: 'hdr' },
      { 'idempotency-key': 'hdr' },
    );
    expect(same.status).toBe(200);
    const differs = await push(
      campaign.id,
      { lead: { phone: '+14155550124' }, idempotencyKey: 'body' },
      { 'idempotency-key': 'hdr2' },
    );
    expect(differs.status).toBe(422);
    expect(await differs.json()).toMatchObject({ error: 'invalid_body', issues: [{ path: ['idempotencyKey'] }] });
    const none = await push(campaign.id, { lead: { phone: '+14155550124' } });
    expect(none.status).toBe(422);
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(1);
  });

  it('refuses an invalid phone with 422 invalid_body and stores nothing', async () => {
    const campaign = await createLeadCampaign();
    const response = await push(campaign.id, { lead: { phone: '0123' }, idempotencyKey: 'bad-phone' });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_body', issues: [{ path: ['lead', 'phone'] }] });
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(0);
  });

  it('takes fields at each cap and refuses them past it (keys, key length, bytes as JSON) with 422 invalid_body, storing nothing', async () => {
    const campaign = await createLeadCampaign();
    const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));
    // {"a":"…"} is 8 bytes around the value; é is 2 bytes in UTF-8: the cap is on bytes, not characters.
    const sized = (bytes: number) => ({ a: 'é'.repeat(Math.floor((bytes - 8) / 2)) + 'x'.repeat((bytes - 8) % 2) });
    expect(Buffer.byteLength(JSON.stringify(sized(LEAD_FIELD_LIMITS.bytes)))).toBe(LEAD_FIELD_LIMITS.bytes);
    const atCaps = [
      many(LEAD_FIELD_LIMITS.keys),
      { ['k'.repeat(LEAD_FIELD_LIMITS.keyLength)]: 1 },
      sized(LEAD_FIELD_LIMITS.bytes),
    ];
    for (const [index, fields] of atCaps.entries()) {
      const response = await push(campaign.id, {
        lead: { phone: '+14155550140', fields },
        idempotencyKey: `at-${index}`,
      });
      expect(response.status, `fields at cap ${index}`).toBe(202);
    }
    const pastCaps = [
      { fields: many(LEAD_FIELD_LIMITS.keys + 1), message: /at most 50 keys \(it has 51\)/ },
      { fields: { ['k'.repeat(LEAD_FIELD_LIMITS.keyLength + 1)]: 1 }, message: /at most 64 characters \(one has 65\)/ },
      { fields: sized(LEAD_FIELD_LIMITS.bytes + 1), message: /at most 4096 bytes as JSON \(it is 4097\)/ },
    ];
    for (const [index, { fields, message }] of pastCaps.entries()) {
      const response = await push(campaign.id, {
        lead: { phone: '+14155550141', fields },
        idempotencyKey: `past-${index}`,
      });
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({
        error: 'invalid_body',
        issues: [{ path: ['lead', 'fields'], message: expect.stringMatching(message) }],
      });
    }
    // A batch rejects that lead alone.
    const batch = await pushBatch(campaign.id, [
      { lead: { phone: '+14155550142', fields: many(51) }, idempotencyKey: 'batch-past' },
      { lead: { phone: '+14155550143', fields: many(50) }, idempotencyKey: 'batch-at' },
    ]);
    const results = ((await batch.json()) as { results: Array<Record<string, unknown>> }).results;
    expect(results.map((result) => result.status)).toEqual(['rejected', 'queued']);
    expect(results[0]).toMatchObject({ error: 'invalid_body', issues: [{ path: ['lead', 'fields'] }] });
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(atCaps.length + 1);
  });

  it('refuses a campaign that takes no pushes, or is stopped, with 409', async () => {
    for (const fields of [{ acceptsLeadPush: false }, { status: 'STOPPED' as const }]) {
      const campaign = await createLeadCampaign(fields);
      const response = await push(campaign.id, { lead: { phone: '+14155550120' }, idempotencyKey: 'x' });
      expect(response.status).toBe(409);
      expect(await response.json()).toEqual({ error: 'campaign_not_accepting_leads' });
    }
  });
});

describe('POST /v1/campaigns/{campaignId}/leads/batch', () => {
  it('answers per lead in request order: queued, duplicate (in the batch or earlier) and rejected with issues', async () => {
    const campaign = await createLeadCampaign();
    await push(campaign.id, { lead: { phone: '+14155550130' }, idempotencyKey: 'earlier' });
    const response = await pushBatch(campaign.id, [
      { lead: { phone: '+14155550131' }, idempotencyKey: 'k1' },
      { lead: { phone: 'not a phone' }, idempotencyKey: 'k2' },
      { lead: { phone: '+14155550130' }, idempotencyKey: 'earlier' },
      { lead: { phone: '+14155550131' }, idempotencyKey: 'k1' },
      { lead: { phone: '+14155550133' } },
      { lead: { phone: '+44 20 7946 0958' }, idempotencyKey: 'k3' },
    ]);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      requestId: string;
      summary: unknown;
      results: Array<Record<string, any>>;
    };
    expect(body.requestId).toBe(response.headers.get('x-request-id'));
    expect(body.summary).toEqual({ queued: 2, duplicate: 2, rejected: 2 });
    expect(body.results.map((result) => [result.index, result.status])).toEqual([
      [0, 'queued'],
      [1, 'rejected'],
      [2, 'duplicate'],
      [3, 'duplicate'],
      [4, 'rejected'],
      [5, 'queued'],
    ]);
    expect(body.results[3]!.leadId).toBe(body.results[0]!.leadId);
    expect(body.results[1]).toMatchObject({
      error: 'invalid_body',
      retryable: false,
      leadId: null,
      issues: [{ path: ['lead', 'phone'] }],
    });
    expect(body.results[4]).toMatchObject({ error: 'invalid_body', issues: [{ path: ['idempotencyKey'] }] });
    expect(body.results[5]).toMatchObject({ phone: '+442079460958', idempotencyKey: 'k3', requestId: body.requestId });
    await Promise.all([finished(campaign.id, 'k1'), finished(campaign.id, 'k3')]);
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(3);
    expect(await db.call.count({ where: { lead: { campaignId: campaign.id } } })).toBe(3);
  });

  it('refuses the whole batch for a campaign-level problem, and an empty or oversized batch', async () => {
    const other = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const foreign = await db.campaign.create({
      data: { workspaceId: other.workspaceId, name: 'Foreign', acceptsLeadPush: true },
    });
    const stopped = await createLeadCampaign({ status: 'STOPPED' });
    const email = await createLeadCampaign({ channel: 'EMAIL' });
    const open = await createLeadCampaign();
    const one = [{ lead: { phone: '+14155550140' }, idempotencyKey: 'one' }];
    expect([(await pushBatch(foreign.id, one)).status, (await pushBatch(stopped.id, one)).status]).toEqual([403, 409]);
    const emailResponse = await pushBatch(email.id, one);
    expect(emailResponse.status).toBe(403);
    expect(await emailResponse.json()).toEqual({ error: 'api_key_not_allowed' });
    expect((await pushBatch(open.id, [])).status).toBe(400);
    expect(
      (
        await pushBatch(
          open.id,
          Array.from({ length: 101 }, (_, i) => ({ lead: { phone: '+14155550141' }, idempotencyKey: `k${i}` })),
        )
      ).status,
    ).toBe(400);
    expect(await db.lead.count({ where: { campaignId: { in: [foreign.id, stopped.id, email.id, open.id] } } })).toBe(0);
  });

  it('queues leads while Temporal is unreachable: they are stored, and the sweep starts their workflows once Temporal answers', async () => {
    const campaign = await createLeadCampaign();
    const cutOff = await startTestApi({ db, url, temporal: await unreachableTemporal(temporal.taskQueue) });
    const leads = [
      { lead: { phone: '+14155550150' }, idempotencyKey: 'outage-1' },
      { lead: { phone: '+14155550151' }, idempotencyKey: 'outage-2' },
    ];
    const accepted = (await (
      await cutOff.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, { key: owner.key, body: { leads } })
    ).json()) as { summary: unknown };
    expect(accepted.summary).toEqual({ queued: 2, duplicate: 0, rejected: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await db.lead.count({ where: { campaignId: campaign.id, workflowStartedAt: null } })).toBe(2);
    const again = (await (await pushBatch(campaign.id, leads)).json()) as { summary: unknown };
    expect(again.summary).toEqual({ queued: 0, duplicate: 2, rejected: 0 });

    // Any API process's sweep takes over leads whose own request could not start them.
    await startTestApi({ db, url, temporal, sweepLeads: { staleAfterMs: 500 } });
    await Promise.all([finished(campaign.id, 'outage-1'), finished(campaign.id, 'outage-2')]);
    expect(await db.call.count({ where: { lead: { campaignId: campaign.id } } })).toBe(2);
    expect(await db.lead.count({ where: { campaignId: campaign.id, workflowStartedAt: null } })).toBe(0);
  });

  it('rejects leads as retryable when they cannot be stored, changes nothing, and accepts the same keys later', async () => {
    const campaign = await createLeadCampaign();
    // A real failure inside PostgreSQL, for this campaign only.
    await db.$executeRawUnsafe(
      `CREATE FUNCTION refuse_leads() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk trouble'; END $$`,
    );
    await db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_leads BEFORE INSERT ON "Lead" FOR EACH ROW WHEN (NEW."campaignId" = '${campaign.id}') EXECUTE FUNCTION refuse_leads()`,
    );
    const leads = [
      { lead: { phone: '+14155550152' }, idempotencyKey: 'stored-later-1' },
      { lead: { phone: '+14155550153' }, idempotencyKey: 'stored-later-2' },
    ];
    const refused = await pushBatch(campaign.id, leads);
    const refusedBody = (await refused.json()) as { summary: unknown; results: Array<Record<string, unknown>> };
    expect(refused.status).toBe(200);
    expect(refusedBody.summary).toEqual({ queued: 0, duplicate: 0, rejected: 2 });
    expect(refusedBody.results[1]).toMatchObject({
      index: 1,
      status: 'rejected',
      retryable: true,
      error: 'internal_error',
      reason: 'lead_not_stored',
      leadId: null,
    });
    const single = await push(campaign.id, leads[0]);
    expect(single.status).toBe(503);
    expect(await single.json()).toEqual({ error: 'internal_error', retryable: true });
    expect(await db.lead.count({ where: { campaignId: campaign.id } })).toBe(0);

    await db.$executeRawUnsafe('DROP TRIGGER refuse_leads ON "Lead"');
    const again = (await (await pushBatch(campaign.id, leads)).json()) as { summary: unknown };
    expect(again.summary).toEqual({ queued: 2, duplicate: 0, rejected: 0 });
    await Promise.all([finished(campaign.id, 'stored-later-1'), finished(campaign.id, 'stored-later-2')]);
    expect(await db.call.count({ where: { lead: { campaignId: campaign.id } } })).toBe(2);
  });

  it('counts as one request against the rate limit', async () => {
    const limited = await createTestWorkspace(db, { scopes: ['campaigns.edit'], settings: { rateLimitPerMinute: 2 } });
    const campaign = await db.campaign.create({
      data: { workspaceId: limited.workspaceId, name: 'Limited', acceptsLeadPush: true },
    });
    const leads = Array.from({ length: 100 }, (_, i) => ({
      lead: { phone: '+14155550160' },
      idempotencyKey: `limited-${i}`,
    }));
    const batch = await pushBatch(campaign.id, leads, limited.key);
    expect(batch.status).toBe(200);
    expect(batch.headers.get('ratelimit')).toMatch(/^limit=2, remaining=1, /);
    expect((await pushBatch(campaign.id, leads.slice(0, 1), limited.key)).status).toBe(200);
    expect((await pushBatch(campaign.id, leads.slice(0, 1), limited.key)).status).toBe(429);
  });
});
