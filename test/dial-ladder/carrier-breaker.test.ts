import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { recordDialRefusal } from '../../activities/dial-ladder/carrier-breaker';
import { DEFAULT_CARRIER_BREAKER } from '../../lib/dial-ladder/carrier-breaker';
import { callIntelligenceWorkflowId, campaignWorkflowId } from '../../lib/temporal/workflow-ids';
import { leadStateQuery } from '../../lib/temporal/messages';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { pushLead } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

// Real servers: PostgreSQL, Temporal, the API, a worker, and the simulated carrier over HTTP. Its
// numbers decide the call (simulators/simulated-carrier/timeline.ts): last digit 0-4 answered, 5 busy,
// 6 no answer, 7 voicemail, 8 failed at the carrier.
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });

async function runningCampaign(maxConcurrentCalls: number) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Breaker',
      acceptsLeadPush: true,
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls,
    },
  });
  await transitionCampaign(api, owner.key, campaign.id, 'start');
  return campaign;
}

/** Distinct numbers (555-01XX, reserved for fiction) that all end in the given digit; at most 20. */
const numbersEndingIn = (digit: number, count: number) =>
  Array.from({ length: count }, (_, i) => `+1${i < 10 ? '415' : '212'}55501${i % 10}${digit}`);

type Lead = Awaited<ReturnType<typeof pushLead>>;

async function pushLeads(campaignId: string, phones: string[]): Promise<Lead[]> {
  const leads: Lead[] = [];
  for (const phone of phones) leads.push(await pushLead(api, owner.key, temporal.client, campaignId, phone));
  return leads;
}

async function campaignView(id: string) {
  const response = await api.request('GET', `/campaigns/${id}`, { key: owner.key });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    statusReason: { code: string; detail: string; at: string } | null;
  };
}

async function kpis(id: string) {
  const response = await api.request('GET', `/campaigns/${id}/kpis`, { key: owner.key });
  expect(response.status).toBe(200);
  return (await response.json()) as { placed: number; pausedReason: { code: string } | null };
}

async function intelligenceWorkflowExists(callId: string) {
  try {
    await temporal.client.workflow.getHandle(callIntelligenceWorkflowId(callId)).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** The status changes the campaign's workflow committed (each runs setCampaignStatus once). */
async function committedTransitions(campaignId: string) {
  const history = await temporal.client.workflow.getHandle(campaignWorkflowId(campaignId)).fetchHistory();
  return (history.events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'setCampaignStatus',
  ).length;
}

describe('call intelligence when a call ends', () => {
  it('an answered call ends with its intelligence stored; a busy one gets none', async () => {
    const campaign = await runningCampaign(2);
    const [answered, busy] = (await pushLeads(campaign.id, ['+14155550120', '+14155550125'])) as [Lead, Lead];
    expect((await (await answered.started()).result()).outcome).toBe('answered');
    expect((await (await busy.started()).result()).outcome).toBe('busy');

    const answeredCall = await until(
      () => db.call.findFirstOrThrow({ where: { leadId: answered.leadId } }),
      (call) => call.intelligence !== null,
    );
    expect(answeredCall.intelligence).toMatchObject({ jobId: callIntelligenceWorkflowId(answeredCall.id) });
    expect(answeredCall.transcript).not.toBeNull();

    // The lead's workflow started what it starts before it finished: nothing was started for the busy call.
    const busyCall = await db.call.findFirstOrThrow({ where: { leadId: busy.leadId } });
    expect(busyCall.outcome).toBe('busy');
    expect(await intelligenceWorkflowExists(busyCall.id)).toBe(false);
    expect(busyCall.intelligence).toBeNull();
  });
});

/** The phases of a lead in its campaign's line queue, whether it queued before or after the campaign's pause. */
const WAITING_IN_QUEUE: readonly string[] = ['waiting_for_line', 'waiting_for_campaign'];

describe('the carrier circuit breaker', () => {
  it('a carrier that fails every call pauses the campaign once, with its reason; the remaining leads hold; a resume clears it and calling continues', async () => {
    const campaign = await runningCampaign(4);
    const leads = await pushLeads(campaign.id, numbersEndingIn(8, 16));

    const paused = await until(
      () => campaignView(campaign.id),
      (view) => view.status === 'PAUSED',
    );
    expect(paused.statusReason).toMatchObject({ code: 'carrier_failures' });
    expect(paused.statusReason!.detail).toContain('failed at the carrier');
    expect(Number.isNaN(Date.parse(paused.statusReason!.at))).toBe(false);
    expect((await kpis(campaign.id)).pausedReason).toMatchObject({ code: 'carrier_failures' });

    // Calls already ringing when it tripped finish; then nothing more is dialed.
    await until(
      () => db.campaign.findUniqueOrThrow({ where: { id: campaign.id } }),
      (row) => row.callsInFlight === 0,
    );
    // Every lead has finished or waits in the line queue. A lead queued by its push has no workflow until its line
    // comes (docs/temporal-ui.md#leads-waiting-for-a-line): the leads' rows tell.
    const leadRows = await until(
      () => db.lead.findMany({ where: { campaignId: campaign.id }, select: { status: true, waitingFor: true } }),
      (rows) =>
        rows.length === 16 &&
        rows.every((row) => ['completed', 'failed', 'cancelled'].includes(row.status) || row.waitingFor === 'campaign'),
    );
    const placedAtTrip = await db.call.count({ where: { campaignId: campaign.id } });
    expect(placedAtTrip).toBeGreaterThanOrEqual(DEFAULT_CARRIER_BREAKER.minAttempts);
    // Up to the 4 lines in flight when it trips, and each line retaken at most once more by a fast lead
    // between the tripping call's end and the pause's commit (one Update round trip).
    expect(placedAtTrip).toBeLessThanOrEqual(DEFAULT_CARRIER_BREAKER.minAttempts + 2 * 4);
    // Each waits in the line queue (docs/features/dial-ladder.md#lines-handed-out): those that came after the pause as
    // held by it, those queued before as waiting for a line; their results say they wait for the campaign.
    const holding = leadRows.filter((row) => row.waitingFor === 'campaign').length;
    expect(holding).toBe(16 - placedAtTrip);
    expect(await db.lead.count({ where: { campaignId: campaign.id, status: 'queued' } })).toBe(holding);
    // Those whose workflows ran say so in their state too.
    for (const { handle } of leads) {
      const state = await handle.query(leadStateQuery).catch(() => null);
      if (state) expect(['finished', ...WAITING_IN_QUEUE]).toContain(state.phase);
    }
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: null } })).toBe(holding);
    // Calls that ended together tripped it once: start and one pause were committed.
    expect(await committedTransitions(campaign.id)).toBe(2);

    const resumed = await transitionCampaign(api, owner.key, campaign.id, 'resume');
    expect(resumed.statusReason).toBeNull();
    expect((await kpis(campaign.id)).pausedReason).toBeNull();

    // Every lead left is called; fewer than the minimum since the resume, so the window, started again
    // at the resume, does not trip again although every call failed.
    for (const { started } of leads) expect((await (await started()).result()).outcome).toBe('failed');
    expect(await db.call.count({ where: { campaignId: campaign.id } })).toBe(16);
    expect(await campaignView(campaign.id)).toMatchObject({ status: 'RUNNING', statusReason: null });
  });

  it('busy and unanswered calls never trip it', async () => {
    const campaign = await runningCampaign(4);
    const leads = await pushLeads(campaign.id, [...numbersEndingIn(5, 8), ...numbersEndingIn(6, 8)]);
    const outcomes = await Promise.all(leads.map(async ({ started }) => (await (await started()).result()).outcome));
    expect(outcomes.filter((outcome) => outcome === 'busy')).toHaveLength(8);
    expect(outcomes.filter((outcome) => outcome === 'no_answer')).toHaveLength(8);
    expect(await campaignView(campaign.id)).toMatchObject({ status: 'RUNNING', statusReason: null });
    expect(await committedTransitions(campaign.id)).toBe(1);
  });

  it('a refused dial clears the campaign refusals older than the window, which the breaker no longer counts', async () => {
    const campaign = await runningCampaign(4);
    const windowAgo = (extraMs: number) => new Date(Date.now() - DEFAULT_CARRIER_BREAKER.windowMs - extraMs);
    const other = await runningCampaign(4);
    await db.carrierDialRefusal.createMany({
      data: [
        { campaignId: campaign.id, attemptId: 'old:1', error: '503', at: windowAgo(60_000) },
        { campaignId: campaign.id, attemptId: 'recent:1', error: '503', at: windowAgo(-60_000) },
        { campaignId: other.id, attemptId: 'other:1', error: '503', at: windowAgo(60_000) },
      ],
    });
    await recordDialRefusal({ db }, campaign.id, 'new:1', new Error('simulated carrier: POST /calls answered 503'));
    const kept = await db.carrierDialRefusal.findMany({
      where: { campaignId: { in: [campaign.id, other.id] } },
      select: { attemptId: true },
      orderBy: { attemptId: 'asc' },
    });
    // Another campaign's rows are its own refusals' business.
    expect(kept.map((row) => row.attemptId)).toEqual(['new:1', 'other:1', 'recent:1']);
  });
});
