import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signEvent, SIGNATURE_HEADER } from '../../lib/calls/signature';
import type { CallEvent } from '../../lib/calls/call-event';
import { CARRIER_PROGRESS_STATES } from '../../lib/calls/call-states';
import { startTestApi } from '../support/api';
import { callEventFor, insertDialingCall } from '../support/calls';
import {
  carrierDependencies,
  simulatedCarrierRecord,
  startTestCarrier,
  TEST_CARRIER_SIGNING_SECRET,
} from '../support/carrier';
import { SIMULATED_CARRIER_TABLES } from '../../simulators/simulated-carrier/call-store';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER, SINGLE_ATTEMPT } from '../support/ladders';
import { startedLeadWorkflow } from '../support/lead-workflows';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
// Calls slow enough to act on while they ring or talk: a 36 s call lasts 1.8 s, ringing 0.3 s (6 s no answer: 1.5 s).
const carrier = await startTestCarrier(db, { timeScale: 0.05 });
// Subscribed to ringing too (TELEPHONY_STATUS_CALLBACK_EVENTS=ringing,in-progress): these tests act while a call rings.
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api, ['ringing', 'in-progress']) });

// A carrier that loses every terminal event, on a task queue of its own whose leads wait 300 ms for one.
const lossyTemporal = { ...temporal, taskQueue: uniqueTaskQueue('lossy') };
const lossyApi = await startTestApi({ db, url, temporal: lossyTemporal });
const lossyCarrier = await startTestCarrier(db, {
  sendsEvent: (event) => !['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(event.status),
});
await startTestWorker(lossyTemporal.taskQueue, {
  db,
  ...carrierDependencies(lossyCarrier, lossyApi),
  callEndDeadlineMs: 300,
});

// The same loss with calls that ring 1.2 s and talk 7.2 s, longer than the deadline and every recheck after it (4 x 300 ms).
const slowLossyTemporal = { ...temporal, taskQueue: uniqueTaskQueue('slow-lossy') };
const slowLossyApi = await startTestApi({ db, url, temporal: slowLossyTemporal });
const slowLossyCarrier = await startTestCarrier(db, {
  timeScale: 0.2,
  sendsEvent: (event) => !['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(event.status),
});
await startTestWorker(slowLossyTemporal.taskQueue, {
  db,
  ...carrierDependencies(slowLossyCarrier, slowLossyApi),
  callEndDeadlineMs: 300,
});

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runningCampaign(via = api, dialLadder = SINGLE_ATTEMPT) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Carrier',
      acceptsLeadPush: true,
      dialLadder,
      callingWindow: ALWAYS_OPEN,
    },
  });
  await transitionCampaign(via, owner.key, campaign.id, 'start');
  return campaign;
}

async function pushLead(campaignId: string, phone: string, via = api, client = temporal.client) {
  const idempotencyKey = randomUUID();
  const response = await via.request('POST', `/v1/campaigns/${campaignId}/leads`, {
    key: owner.key,
    body: { lead: { phone }, idempotencyKey },
  });
  expect(response.status).toBe(202);
  const { leadId } = (await response.json()) as { leadId: string };
  return { leadId, handle: await startedLeadWorkflow(client, campaignId, idempotencyKey) };
}

/** A call recorded as dialing with its line taken, as dialCall leaves it, for events sent by hand. */
async function dialingCall() {
  const campaign = await db.campaign.create({
    data: { workspaceId: owner.workspaceId, name: 'Events', status: 'RUNNING', callsInFlight: 1 },
  });
  const call = await insertDialingCall(db, owner, campaign.id);
  return { call, campaignId: campaign.id };
}

function post(body: string, signature: string | undefined, provider = 'simulated') {
  return fetch(`${api.baseUrl}/telephony/${provider}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature !== undefined && { [SIGNATURE_HEADER]: signature }) },
    body,
  });
}

function send(event: CallEvent) {
  const body = JSON.stringify(event);
  return post(body, signEvent(TEST_CARRIER_SIGNING_SECRET, body));
}

const stateOf = async (callId: string) => ({
  call: await db.call.findUniqueOrThrow({ where: { id: callId } }),
  events: await db.callEvent.count({ where: { callId } }),
});

describe('POST /telephony/{provider}/events', () => {
  it('refuses unsigned, badly signed, stale, tampered and replayed-late events with 401, and changes nothing', async () => {
    const { call } = await dialingCall();
    const body = JSON.stringify(callEventFor(call, 'completed', { answeredBy: 'human', durationMs: 30_000 }));
    const before = await stateOf(call.id);
    // Well past the tolerance either way, and signed as each is sent: a slow machine cannot bring an event
    // dated in the future back within it before it arrives.
    const outside = 360_000;
    const refusals = [
      await post(body, undefined),
      await post(body, 'garbage'),
      await post(body, signEvent('another-secret-of-some-other-carrier', body)),
      await post(body, signEvent(TEST_CARRIER_SIGNING_SECRET, body, Date.now() - outside)),
      await post(body, signEvent(TEST_CARRIER_SIGNING_SECRET, body, Date.now() + outside)),
      await post(body.replace('30000', '30001'), signEvent(TEST_CARRIER_SIGNING_SECRET, body)),
      await post(body, signEvent(TEST_CARRIER_SIGNING_SECRET, body), 'another-carrier'),
      await post(body, signEvent(TEST_CARRIER_SIGNING_SECRET, body), '__proto__'),
    ];
    for (const response of refusals) {
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: 'invalid_signature' });
    }
    expect(await stateOf(call.id)).toEqual(before);
    // The same body, properly signed, is taken: what was refused was the signature alone.
    expect((await post(body, signEvent(TEST_CARRIER_SIGNING_SECRET, body))).status).toBe(200);
  });

  it('answers 400 invalid_body for an instant PostgreSQL cannot hold (year 0), and records nothing', async () => {
    const { call } = await dialingCall();
    const before = await stateOf(call.id);
    const response = await send(callEventFor(call, 'ringing', { occurredAt: '0000-01-01T00:00:00Z' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_body' });
    expect(await stateOf(call.id)).toEqual(before);
  });

  it('answers 404 for a call it does not know, and records nothing', async () => {
    const eventsBefore = await db.callEvent.count();
    const response = await send(callEventFor({ providerCallId: `sim_${randomUUID()}` }, 'ringing'));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'unknown_call' });
    expect(await db.callEvent.count()).toBe(eventsBefore);
  });

  it('never moves a call backwards: duplicate, late and out-of-order events change nothing; the line is given back once', async () => {
    const { call, campaignId } = await dialingCall();
    const applied = async (event: CallEvent) => {
      const response = await send(event);
      expect(response.status).toBe(200);
      return ((await response.json()) as { applied: boolean }).applied;
    };
    expect(await applied(callEventFor(call, 'in-progress', { answeredBy: 'human' }))).toBe(true);
    // Ringing arrives after the answer: recorded, not applied.
    expect(await applied(callEventFor(call, 'ringing'))).toBe(false);
    expect(await applied(callEventFor(call, 'queued'))).toBe(false);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).carrierStatus).toBe('in-progress');

    const completed = callEventFor(call, 'completed', { answeredBy: 'human', durationMs: 31_000 });
    expect(await applied(completed)).toBe(true);
    const ended = await db.call.findUniqueOrThrow({ where: { id: call.id } });
    expect(ended).toMatchObject({
      status: 'ended',
      carrierStatus: 'completed',
      outcome: 'answered',
      answeredBy: 'human',
      durationMs: 31_000,
    });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaignId } })).callsInFlight).toBe(0);

    // The same event again, and a different terminal event after the end: nothing moves, no second line back.
    expect(await applied(completed)).toBe(false);
    expect(await applied(callEventFor(call, 'busy'))).toBe(false);
    expect(await applied(callEventFor(call, 'in-progress', { eventId: `${call.providerCallId}:late` }))).toBe(false);
    expect(await db.call.findUniqueOrThrow({ where: { id: call.id } })).toEqual(ended);
    const campaign = await db.campaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(campaign.callsInFlight).toBe(0);
    const events = await db.callEvent.findMany({ where: { callId: call.id }, orderBy: { receivedAt: 'asc' } });
    expect(events.map((event) => [event.status, event.applied])).toEqual([
      ['in-progress', true],
      ['ringing', false],
      ['queued', false],
      ['completed', true],
      ['busy', false],
      ['in-progress', false],
    ]);
  });

  it('maps terminal states to outcomes: machine -> voicemail, failed with invalid_number -> invalid_number', async () => {
    const cases: Array<[Partial<CallEvent> & { status: CallEvent['status'] }, string]> = [
      [{ status: 'completed', answeredBy: 'machine', durationMs: 20_000 }, 'voicemail'],
      [{ status: 'failed', reason: 'invalid_number' }, 'invalid_number'],
      [{ status: 'failed', reason: 'carrier_error' }, 'failed'],
      [{ status: 'no-answer' }, 'no_answer'],
      [{ status: 'busy' }, 'busy'],
      [{ status: 'canceled' }, 'no_answer'],
    ];
    for (const [event, outcome] of cases) {
      const { call } = await dialingCall();
      expect((await send(callEventFor(call, event.status, event))).status).toBe(200);
      expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).outcome).toBe(outcome);
    }
  });
});

describe('the asynchronous carrier path', () => {
  it('holds the line for the length of the call: the call rings, talks, then ends the lead', async () => {
    const campaign = await runningCampaign();
    const { leadId, handle } = await pushLead(campaign.id, '+14155550130');
    const talking = await until(
      () => db.call.findFirst({ where: { leadId } }),
      (call) => call?.carrierStatus === 'in-progress',
    );
    expect(talking).toMatchObject({ status: 'dialing', workflowId: handle.workflowId });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(1);
    expect(await handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    const call = await db.call.findUniqueOrThrow({ where: { id: talking!.id } });
    expect(call).toMatchObject({
      status: 'ended',
      carrierStatus: 'completed',
      answeredBy: 'human',
      durationMs: 33_000,
    });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
    const events = await db.callEvent.findMany({ where: { callId: call.id }, orderBy: { occurredAt: 'asc' } });
    // The dial subscribes to ringing and in-progress here (its own answer says queued); the end is always sent.
    expect(events.map((event) => event.status)).toEqual(['ringing', 'in-progress', 'completed']);
    expect(await simulatedCarrierRecord(db).call('"providerCallId" = $1', call.providerCallId!)).toMatchObject({
      statusCallbackEvents: ['ringing', 'in-progress'],
    });
  });

  it('stop hangs up a call while it talks and while it rings; their canceled events end them', async () => {
    const campaign = await runningCampaign(api, QUICK_LADDER);
    const talking = await pushLead(campaign.id, '+14155550121');
    const ringing = await pushLead(campaign.id, '+14155550126');
    await until(
      () => db.call.findMany({ where: { leadId: { in: [talking.leadId, ringing.leadId] } } }),
      (calls) =>
        calls.find((call) => call.leadId === talking.leadId)?.carrierStatus === 'in-progress' &&
        calls.find((call) => call.leadId === ringing.leadId)?.carrierStatus === 'ringing',
    );
    await transitionCampaign(api, owner.key, campaign.id, 'stop');
    // Cut short after the answer, the call was answered (which ends the ladder); cut short while ringing it was
    // not answered, and the next attempt finds the campaign stopped.
    expect(await talking.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await ringing.handle.result()).toEqual({ status: 'cancelled', outcome: 'campaign_stopped', attempts: 2 });
    const calls = await db.call.findMany({ where: { campaignId: campaign.id }, orderBy: { attempt: 'asc' } });
    expect(calls).toHaveLength(2);
    const byLead = new Map(calls.map((call) => [call.leadId, call]));
    expect(byLead.get(talking.leadId)).toMatchObject({
      status: 'ended',
      carrierStatus: 'canceled',
      outcome: 'answered',
    });
    expect(byLead.get(ringing.leadId)).toMatchObject({
      status: 'ended',
      carrierStatus: 'canceled',
      outcome: 'no_answer',
    });
    for (const call of calls) expect(call.hangupRequestedAt).not.toBeNull();
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });

  it('pause lets a call in progress finish, and holds the lead before its next attempt', async () => {
    // A number that rings 1.5 s before no answer: long enough to be seen ringing.
    const campaign = await runningCampaign(api, QUICK_LADDER);
    const { leadId, handle } = await pushLead(campaign.id, '+14155550126');
    await until(
      () => db.call.findFirst({ where: { leadId } }),
      (call) => call?.carrierStatus === 'ringing',
    );
    await transitionCampaign(api, owner.key, campaign.id, 'pause');
    const first = await until(
      () => db.call.findFirstOrThrow({ where: { leadId } }),
      (call) => call.status === 'ended',
    );
    expect(first).toMatchObject({ carrierStatus: 'no-answer', outcome: 'no_answer', hangupRequestedAt: null });
    await until(
      () => handle.query('leadState'),
      (state) => (state as { phase: string }).phase === 'waiting_for_campaign',
    );
    await sleep(300);
    expect(await db.call.count({ where: { leadId } })).toBe(1);
    await transitionCampaign(api, owner.key, campaign.id, 'resume');
    expect(await handle.result()).toEqual({ status: 'failed', outcome: 'no_answer', attempts: 3 });
  });

  it('pause while a call talks hangs nothing up: the call is answered to its end', async () => {
    const campaign = await runningCampaign(api, QUICK_LADDER);
    const { leadId, handle } = await pushLead(campaign.id, '+14155550133');
    await until(
      () => db.call.findFirst({ where: { leadId } }),
      (call) => call?.carrierStatus === 'in-progress',
    );
    await transitionCampaign(api, owner.key, campaign.id, 'pause');
    expect(await handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await db.call.findFirstOrThrow({ where: { leadId } })).toMatchObject({
      carrierStatus: 'completed',
      outcome: 'answered',
      durationMs: 33_000,
      hangupRequestedAt: null,
    });
  });

  it('reconciles a call whose terminal event never comes with the carrier lookup', async () => {
    const campaign = await runningCampaign(lossyApi);
    const answered = await pushLead(campaign.id, '+14155550122', lossyApi);
    const invalid = await pushLead(campaign.id, '+14155550129', lossyApi);
    expect(await answered.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
    expect(await invalid.handle.result()).toEqual({ status: 'failed', outcome: 'invalid_number', attempts: 1 });
    const call = await db.call.findFirstOrThrow({ where: { leadId: answered.leadId } });
    expect(call).toMatchObject({ status: 'ended', carrierStatus: 'completed', durationMs: 32_000 });
    const events = await db.callEvent.findMany({ where: { callId: call.id }, orderBy: { occurredAt: 'asc' } });
    // The carrier's own event up to the end (this worker keeps the default subscription: the answer), then the lookup's.
    expect(events.map((event) => [event.status, event.eventId.startsWith('lookup:')])).toEqual([
      ['in-progress', false],
      ['completed', true],
    ]);
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });

  it('gives up on a call the carrier still reports as talking after every recheck: hung up, ended failed', async () => {
    const campaign = await runningCampaign(slowLossyApi);
    const { leadId, handle } = await pushLead(campaign.id, '+14155550160', slowLossyApi);
    expect(await handle.result()).toEqual({ status: 'failed', outcome: 'failed', attempts: 1 });
    const call = await db.call.findFirstOrThrow({ where: { leadId } });
    expect(call).toMatchObject({ status: 'ended', outcome: 'failed' });
    // The last state known stays, one before the end (queued while it rings: the default subscription says
    // nothing then); it never ended by itself.
    expect(CARRIER_PROGRESS_STATES).toContain(call.carrierStatus);
    expect(call.hangupRequestedAt).not.toBeNull();
    expect((await simulatedCarrierRecord(db).call('"attemptId" = $1', call.attemptId)).hangupAt).not.toBeNull();
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });

  it('ends a call neither its events nor its carrier know of as failed, and gives its line back', async () => {
    const campaign = await runningCampaign(lossyApi);
    const { leadId, handle } = await pushLead(campaign.id, '+14155550123', lossyApi);
    // The carrier forgets the call (as if its records were lost) while it is being waited for.
    const recorded = await until(
      async () => (await simulatedCarrierRecord(db).calls(`"attemptId" LIKE $1 || '%'`, leadId))[0],
      (row) => row !== undefined,
    );
    await db.sql(`DELETE FROM ${SIMULATED_CARRIER_TABLES.calls} WHERE "attemptId" = $1`, recorded!.attemptId);
    expect(await handle.result()).toEqual({ status: 'failed', outcome: 'failed', attempts: 1 });
    expect(await db.call.findFirstOrThrow({ where: { leadId } })).toMatchObject({ status: 'ended', outcome: 'failed' });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).callsInFlight).toBe(0);
  });
});
