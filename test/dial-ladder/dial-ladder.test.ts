import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../activities';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { nextAllowedInstant, type CallingWindow } from '../../lib/dial-ladder/calling-window';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { leadStateQuery } from '../../lib/temporal/messages';
import { startTestApi } from '../support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { startedLeadWorkflow } from '../support/lead-workflows';
import { until } from '../support/until';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
// A carrier that loses every terminal event (the legacy placeCall's reconciliation).
const lossy = await startTestCarrier(db, {
  sendsEvent: (event) => !['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(event.status),
});
const calls = carrier.client;
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'calls.edit'] });

async function pushLead(phone: string, settings: { dialLadder?: DialLadder; callingWindow?: CallingWindow } = {}) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Ladder',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
      ...settings,
    },
  });
  const idempotencyKey = randomUUID();
  const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
    key: owner.key,
    body: { lead: { phone }, idempotencyKey },
  });
  expect(response.status).toBe(202);
  const { leadId } = (await response.json()) as { leadId: string };
  return { leadId, handle: await startedLeadWorkflow(temporal.client, campaign.id, idempotencyKey) };
}

const callsOf = (leadId: string) => db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } });

describe('the CLASSIC dial ladder', () => {
  it('moves a busy number through every rung, one call per attempt, and ends it failed', async () => {
    const { leadId, handle } = await pushLead('+14155550125');
    expect(await handle.result()).toEqual({ status: 'failed', outcome: 'busy', attempts: 3 });
    const placed = await callsOf(leadId);
    expect(placed.map((call) => [call.attempt, call.outcome, call.status, call.attemptId])).toEqual([
      [1, 'busy', 'ended', `${leadId}:1`],
      [2, 'busy', 'ended', `${leadId}:2`],
      [3, 'busy', 'ended', `${leadId}:3`],
    ]);
    // The rung delay (1 s) lies between attempts.
    expect(placed[1]!.startedAt.getTime() - placed[0]!.endedAt!.getTime()).toBeGreaterThanOrEqual(900);
    expect((await db.lead.findUniqueOrThrow({ where: { id: leadId } })).status).toBe('failed');
    expect(await simulatedCarrierRecord(db).count(`"attemptId" LIKE $1 || '%'`, leadId)).toBe(3);
  });

  it('ends at once on an answer or an invalid number, and moves on after voicemail, no answer and failure', async () => {
    const answered = await pushLead('+14155550120');
    const invalid = await pushLead('+14155550129');
    const voicemail = await pushLead('+14155550127');
    expect(await answered.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await invalid.handle.result()).toEqual({ status: 'failed', outcome: 'invalid_number', attempts: 1 });
    expect(await voicemail.handle.result()).toEqual({ status: 'failed', outcome: 'voicemail', attempts: 3 });
    expect(await db.call.count({ where: { leadId: answered.leadId } })).toBe(1);
    expect(await db.call.count({ where: { leadId: invalid.leadId } })).toBe(1);
  });

  it("follows the campaign's own rules", async () => {
    const stopOnBusy: DialLadder = { ...QUICK_LADDER, outcomes: { ...QUICK_LADDER.outcomes, busy: 'end' } };
    const { leadId, handle } = await pushLead('+14155550125', { dialLadder: stopOnBusy });
    expect(await handle.result()).toEqual({ status: 'failed', outcome: 'busy', attempts: 1 });
    expect(await db.call.count({ where: { leadId } })).toBe(1);
  });

  it('reads the Do-Not-Call list immediately before every attempt', async () => {
    const added = await api.request('POST', '/do-not-call', {
      key: owner.key,
      body: { phones: ['+1 415 555 0135', '+14155550135'] },
    });
    expect(await added.json()).toEqual({ added: 1, total: 1 });
    const blocked = await pushLead('+14155550135');
    expect(await blocked.handle.result()).toEqual({ status: 'cancelled', outcome: 'do_not_call', attempts: 1 });
    expect(await db.call.count({ where: { leadId: blocked.leadId } })).toBe(0);

    // Listed after the first attempt: the second is never placed.
    const slowLadder: DialLadder = {
      ...QUICK_LADDER,
      rungs: [{ delaySeconds: 0 }, { delaySeconds: 3 }, { delaySeconds: 3 }],
    };
    const later = await pushLead('+14155550145', { dialLadder: slowLadder });
    while ((await db.call.count({ where: { leadId: later.leadId, status: 'ended' } })) === 0)
      await new Promise((r) => setTimeout(r, 100));
    await api.request('POST', '/do-not-call', { key: owner.key, body: { phones: ['+14155550145'] } });
    expect(await later.handle.result()).toEqual({ status: 'cancelled', outcome: 'do_not_call', attempts: 2 });
    expect(await db.call.count({ where: { leadId: later.leadId } })).toBe(1);
  });

  it('waits on a durable timer for the calling window, and places no call before it opens', async () => {
    // Open all day, but only tomorrow (Los Angeles time): the first attempt waits for local midnight.
    const today = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', weekday: 'short' }).format(
      new Date(),
    );
    const isoToday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(today) + 1;
    const window: CallingWindow = { start: '00:00', end: '24:00', days: [(isoToday % 7) + 1] };
    const { leadId, handle } = await pushLead('+14155550120', { callingWindow: window });
    let state = await handle.query(leadStateQuery);
    for (let tries = 0; state.phase !== 'waiting_for_window' && tries < 50; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await handle.query(leadStateQuery);
    }
    expect(state).toMatchObject({ phase: 'waiting_for_window', attempt: 1 });
    const expected = nextAllowedInstant(new Date(), window, ['America/Los_Angeles'])!;
    expect(Math.abs(new Date(state.nextWakeAt!).getTime() - expected.getTime())).toBeLessThan(60_000);
    const description = await handle.describe();
    expect(description.raw.pendingActivities ?? []).toHaveLength(0);
    expect(await db.call.count({ where: { leadId } })).toBe(0);
    await handle.terminate('test over');
  });
});

describe('placing a call survives a crash between dialing and recording', () => {
  it('asks the provider what became of an attempt instead of dialing it again', async () => {
    const activities = createActivities({
      db,
      ...carrierDependencies(carrier, api),
      whatsapp: createSimulatedWhatsApp(db),
      temporal: temporal.client,
    });
    const campaign = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Crash', status: 'RUNNING' },
    });
    const lead = await db.lead.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        idempotencyKey: 'crash',
        phone: '+14155550131',
        workflowId: 'crash',
        requestId: randomUUID(),
      },
    });
    const attemptId = `${lead.id}:1`;
    // As a worker leaves it when it dies after the provider took the call and before recording it.
    await db.call.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        leadId: lead.id,
        attempt: 1,
        attemptId,
        provider: 'simulated',
        status: 'dialing',
        startedAt: new Date(),
      },
    });
    const placedBefore = await calls.dial({
      attemptId,
      from: null,
      to: lead.phone,
      agent: null,
      lead: { name: null, fields: {} },
      statusCallbackUrl: `${api.baseUrl}/telephony/simulated/events`,
    });

    const placed = await activities.dialCall({ leadId: lead.id, attempt: 1 });
    expect(placed).toMatchObject({ outcome: 'dialed', attemptId });
    // The carrier's events end it; a retry of the dial meanwhile or after places nothing new. Meanwhile
    // the call is still on, or (on a slow machine, where the simulated call outruns the retry) already ended.
    expect(['dialed', 'answered']).toContain((await activities.dialCall({ leadId: lead.id, attempt: 1 })).outcome);
    await until(
      () => db.call.findUniqueOrThrow({ where: { attemptId } }),
      (call) => call.status === 'ended',
    );
    expect(await simulatedCarrierRecord(db).count('"attemptId" = $1', attemptId)).toBe(1);
    // Dialed without statusCallbackEvents: the carrier reports every state, queued too.
    const reported = await db.callEvent.findMany({ where: { call: { attemptId } }, orderBy: { occurredAt: 'asc' } });
    expect(reported.map((event) => event.status)).toEqual(['queued', 'ringing', 'in-progress', 'completed']);
    expect(await db.call.findUniqueOrThrow({ where: { attemptId } })).toMatchObject({
      status: 'ended',
      outcome: 'answered',
      providerCallId: placedBefore.providerCallId,
    });
    // And a retry after it ended answers its outcome.
    expect(await activities.dialCall({ leadId: lead.id, attempt: 1 })).toMatchObject({ outcome: 'answered' });
  });

  it('keeps the synchronous placeCall for runs recorded before the carrier path: it dials, then waits for the end', async () => {
    const activities = createActivities({
      db,
      ...carrierDependencies(carrier, api),
      whatsapp: createSimulatedWhatsApp(db),
      temporal: temporal.client,
    });
    const campaign = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Legacy', status: 'RUNNING' },
    });
    const lead = await db.lead.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        idempotencyKey: 'legacy',
        phone: '+14155550127',
        workflowId: 'legacy',
        requestId: randomUUID(),
      },
    });
    const placed = await activities.placeCall({ leadId: lead.id, attempt: 1 });
    expect(placed).toMatchObject({ outcome: 'voicemail', durationMs: 32_000 });
    expect(await db.call.findUniqueOrThrow({ where: { attemptId: `${lead.id}:1` } })).toMatchObject({
      status: 'ended',
      carrierStatus: 'completed',
      answeredBy: 'machine',
    });
    expect(await activities.placeCall({ leadId: lead.id, attempt: 1 })).toEqual(placed);
  });

  it('the synchronous placeCall reconciles a call whose terminal event never comes, once past the deadline', async () => {
    const activities = createActivities({
      db,
      ...carrierDependencies(lossy, api),
      callEndDeadlineMs: 300,
      whatsapp: createSimulatedWhatsApp(db),
      temporal: temporal.client,
    });
    const campaign = await db.campaign.create({
      data: { workspaceId: owner.workspaceId, name: 'Legacy, lossy', status: 'RUNNING' },
    });
    const lead = await db.lead.create({
      data: {
        workspaceId: owner.workspaceId,
        campaignId: campaign.id,
        idempotencyKey: 'legacy-lossy',
        phone: '+14155550125',
        workflowId: 'legacy-lossy',
        requestId: randomUUID(),
      },
    });
    // No busy event ever arrives: past the deadline the carrier's lookup tells how the call ended.
    expect(await activities.placeCall({ leadId: lead.id, attempt: 1 })).toMatchObject({ outcome: 'busy' });
    const call = await db.call.findUniqueOrThrow({ where: { attemptId: `${lead.id}:1` } });
    expect(call).toMatchObject({ status: 'ended', outcome: 'busy', carrierStatus: 'busy' });
    expect(await db.callEvent.findMany({ where: { callId: call.id }, select: { eventId: true } })).toContainEqual({
      eventId: `lookup:${call.providerCallId}:busy`,
    });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });
});
