import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { endCall, resumeOrWithdraw, takeLine } from '../../lib/calls/call-lines';
import { startTestApi } from '../support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { leadResult } from '../support/lead-workflows';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();

const api = await startTestApi({ db, url, temporal });
/**
 * The simulated carrier over HTTP at a time scale where a call rings 6 s and talks 30-39 s of simulated
 * time in 120-180 ms: the carrier itself counts the calls live at once (dialed, not yet at their end).
 */
const carrier = await startTestCarrier(db, { timeScale: 0.004 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
// Load: a carrier of its own (it counts live calls across every campaign it serves), calls of 1.2-1.5 s:
// long enough that the first five dials overlap even on a loaded machine (with calls of 0.1 s a CI run
// saw 4 live at most, with 0.4-0.5 s a run under a load average of 13 saw 3: every line was used, never all at
// once), short enough for 40 calls on 5 lines.
const loadTemporal = { ...temporal, taskQueue: uniqueTaskQueue('cap-load') };
const loadApi = await startTestApi({ db, url, temporal: loadTemporal });
const loadCarrier = await startTestCarrier(db, { timeScale: 0.03 });
await startTestWorker(loadTemporal.taskQueue, { db, ...carrierDependencies(loadCarrier, loadApi) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });

describe('the concurrency cap of a campaign', () => {
  it('never has more calls in flight than the campaign allows, and every lead is still dialed', async () => {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Capped',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        maxConcurrentCalls: 2,
      },
    });
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: {
        leads: keys.map((idempotencyKey, index) => ({ lead: { phone: `+1415555012${index % 5}` }, idempotencyKey })),
      },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({ queued: 8, duplicate: 0, rejected: 0 });
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    expect(results.every((result) => result.status === 'completed' && result.attempts === 1)).toBe(true);
    expect(await db.call.count({ where: { campaignId: campaign.id, status: 'ended' } })).toBe(8);
    expect(carrier.server.maxLiveCalls).toBe(2);
    // Every line taken was given back.
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });

  it('under load (40 answered leads on 5 lines) holds exactly 5 calls live at the most, each line for its call', async () => {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Loaded',
        acceptsLeadPush: true,
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        maxConcurrentCalls: 5,
      },
    });
    const keys = Array.from({ length: 40 }, () => randomUUID());
    const response = await loadApi.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: {
        leads: keys.map((idempotencyKey, index) => ({
          lead: { phone: `+141555502${String(index).padStart(2, '0').slice(-1)}${index % 5}` },
          idempotencyKey,
        })),
      },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: 40,
      duplicate: 0,
      rejected: 0,
    });
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaign.id, key)));
    expect(results.every((result) => result.status === 'completed' && result.attempts === 1)).toBe(true);
    expect(loadCarrier.server.maxLiveCalls).toBe(5);
    expect(
      await simulatedCarrierRecord(db).count(
        '"attemptId" = ANY($1)',
        (await db.call.findMany({ where: { campaignId: campaign.id } })).map((call) => call.attemptId),
      ),
    ).toBe(40);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  }, 180_000);

  it('decides concurrent attempts against the cap exactly: as many start as there are lines', async () => {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Race',
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        maxConcurrentCalls: 3,
      },
    });
    const leads = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        db.lead.create({
          data: {
            workspaceId: owner.workspaceId,
            campaignId: campaign.id,
            idempotencyKey: `race-${index}`,
            phone: `+1415555013${index % 10}`,
            workflowId: `race-${randomUUID()}`,
            requestId: randomUUID(),
          },
        }),
      ),
    );
    const decisions = await Promise.all(
      leads.map((lead) =>
        takeLine(db.sql, { leadId: lead.id, attempt: 1, attemptId: `${lead.id}:1`, provider: 'simulated' }),
      ),
    );
    expect(decisions.filter((decision) => decision?.verdict === 'started')).toHaveLength(3);
    // Without a workflow to wake, an attempt that finds no line is answered queued without an entry in the queue.
    expect(decisions.filter((decision) => decision?.verdict === 'queued')).toHaveLength(9);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id } })).toBe(0);
    expect(await db.call.count({ where: { campaignId: campaign.id, status: 'dialing' } })).toBe(3);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(3);

    // Ending a call gives its line to the next attempt; ending it twice gives back one line only.
    const first = leads[decisions.findIndex((decision) => decision?.verdict === 'started')]!;
    const ended = await endCall(db, `${first.id}:1`, { providerCallId: 'sim_x', outcome: 'answered', durationMs: 1 });
    expect(await endCall(db, `${first.id}:1`, { providerCallId: 'sim_x', outcome: 'answered', durationMs: 1 })).toEqual(
      ended,
    );
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(2);
    const waiting = leads.filter((_, index) => decisions[index]?.verdict !== 'started');
    expect(
      (
        await takeLine(db.sql, {
          leadId: waiting[0]!.id,
          attempt: 1,
          attemptId: `${waiting[0]!.id}:1`,
          provider: 'simulated',
        })
      )?.verdict,
    ).toBe('started');
    expect(
      (
        await takeLine(db.sql, {
          leadId: waiting[1]!.id,
          attempt: 1,
          attemptId: `${waiting[1]!.id}:1`,
          provider: 'simulated',
        })
      )?.verdict,
    ).toBe('queued');
  });

  it('withdraws an attempt its provider never placed when the campaign was paused meanwhile, and dials it while it runs', async () => {
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Withdraw',
        status: 'RUNNING',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        maxConcurrentCalls: 1,
      },
    });
    const lead = await db.lead.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        idempotencyKey: 'withdraw',
        phone: '+14155550140',
        workflowId: `withdraw-${randomUUID()}`,
        requestId: randomUUID(),
      },
    });
    const attemptId = `${lead.id}:1`;
    expect((await takeLine(db.sql, { leadId: lead.id, attempt: 1, attemptId, provider: 'simulated' }))?.verdict).toBe(
      'started',
    );
    // The worker died before the provider was asked; the campaign was paused before the retry.
    await db.campaign.update({ where: { id: campaign.id }, data: { status: 'PAUSED' } });
    expect(await resumeOrWithdraw(db, { leadId: lead.id, attemptId })).toMatchObject({
      verdict: 'campaign_on_hold',
      phone: lead.phone,
      handedOver: [],
    });
    expect(await db.call.count({ where: { attemptId } })).toBe(0);
    expect(await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({ callsInFlight: 0 });
    expect(await db.lead.findUniqueOrThrow({ where: { id: lead.id } })).toMatchObject({ status: 'queued' });

    await db.campaign.update({ where: { id: campaign.id }, data: { status: 'RUNNING' } });
    expect((await takeLine(db.sql, { leadId: lead.id, attempt: 1, attemptId, provider: 'simulated' }))?.verdict).toBe(
      'started',
    );
    expect(await resumeOrWithdraw(db, { leadId: lead.id, attemptId })).toMatchObject({
      verdict: 'started',
      phone: lead.phone,
      handedOver: [],
    });
    expect(await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({ callsInFlight: 1 });
  });
});
