// Test calls (POST /calls/test) through the carrier connection of their caller number (docs/features/test-calls.md,
// "Which carrier"), end to end on the real servers: the API, a worker, Temporal and PostgreSQL, the Twilio and Telnyx
// twins as the carriers, and the simulated carrier for a number bound to no connection. The twins' own tables and
// call logs say what was really placed and said.
import { describe, expect, it } from 'vitest';
import { connectCarrier, removeCarrierConnection } from '../../lib/carrier-connections/connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import type { Transcript } from '../../lib/calls/transcript';
import { grantCredits } from '../../lib/door/workspace-admin';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import type { TestCallResult } from '../../lib/test-calls/test-call';
import { simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import {
  connectCallers,
  expectAnsweredWalk,
  insertShoeShopAgent,
  said,
  startCarrierPath,
  TELNYX_TWIN_ACCOUNT,
  TWILIO_TWIN_ACCOUNT,
  withIntelligence,
} from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import {
  scriptTelnyxPersona,
  startTestTelnyxTwin,
  startWebhookReceiver,
  TELNYX_TWIN_CONNECTION_ID,
  telnyxTwinLog,
  telnyxTwinRecord,
} from '../support/telnyx-twin';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { scriptPersona, startTestTwilioTwin, twilioTwinRecord, twinLog } from '../support/twilio-twin';
import { insertTestCall, startTestCallWorkflow as startTestCallWorkflowOf, testCallEntries } from '../support/calls';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));

const twilioCaller = '+14155580001';
/** Bound to the Twilio twin's connection, but not a caller id of its account: the twin refuses it (21210). */
const refusedCaller = '+14155580002';
const telnyxCaller = '+14155580003';
const unboundCaller = '+14155580004';

// Twilio twin time: a spoken word 8 ms, a 60 s ring timeout 1.2 s.
const twilioTwin = await startTestTwilioTwin(db, {
  timeScale: 0.02,
  accounts: [
    {
      sid: TWILIO_TWIN_ACCOUNT_SID,
      authToken: TWILIO_TWIN_AUTH_TOKEN,
      callerIds: [twilioCaller],
    },
  ],
});
// Slower on Telnyx: Call Control holds no program, so a person waits for each command, and hangs up after 30 s of
// silence (1.5 s here) on a loaded machine.
const telnyxTwin = await startTestTelnyxTwin(db, { timeScale: 0.05 });
const simulated = await startTestCarrier(db);
/** Where the webhooks of a dial whose answer is lost go: never to the product. */
const lostWebhooks = await startWebhookReceiver();
// The script walk (CONVERSATION_ENGINE=gather), whose commands these tests read; the dialogue engine's test calls:
// test/test-calls/test-call-minutes.test.ts.
const { api } = await startCarrierPath(db, {
  url,
  temporal,
  keyring,
  fallback: simulated.client,
  api: { conversationEngine: 'gather' },
});

const tester = await createTestWorkspace(db, { scopes: ['calls.test', 'calls.view'] });
await grantCredits(db, tester.workspaceId, 1_000);
const twilioConnection = await connectCallers(
  db,
  keyring,
  {
    workspaceId: tester.workspaceId,
    provider: 'twilio-twin',
    baseUrl: twilioTwin.baseUrl,
    account: TWILIO_TWIN_ACCOUNT,
  },
  twilioCaller,
  refusedCaller,
);
const telnyxConnection = await connectCallers(
  db,
  keyring,
  {
    workspaceId: tester.workspaceId,
    provider: 'telnyx-twin',
    baseUrl: telnyxTwin.baseUrl,
    account: TELNYX_TWIN_ACCOUNT,
  },
  telnyxCaller,
);
await assignPhoneNumber(db, tester.workspaceId, unboundCaller);

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const agent = await insertShoeShopAgent(db, tester.workspaceId, { questions: QUESTIONS });
const ANSWERS = [
  { speech: "I'd like navy, please.", confidence: 0.93 },
  { speech: '3 pairs.', confidence: 0.88 },
];
const WALK = {
  agent: ['Hello Ana, this is the shoe shop.', ...QUESTIONS, 'Thank you, goodbye.'],
  lead: ANSWERS.map(({ speech, confidence }) => ({ text: speech, confidence })),
};

async function placed(to: string, from: string) {
  const response = await api.request('POST', '/calls/test', {
    key: tester.key,
    body: { agentId: agent.id, to, from, lead: { name: 'Ana', fields: {} } },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { callId: string }).callId;
}

const resultOf = (callId: string) =>
  temporal.client.workflow.getHandle(testCallWorkflowId(callId)).result() as Promise<TestCallResult>;

/** The call's ledger entries: [kind, status, amount], the hold first. */
const entriesOf = (callId: string) => testCallEntries(db, callId);

/** Billed as any test call (docs/features/credits.md): the hold posted, then 0.1 a started minute of talk. */
async function expectBilledByMinutes(callId: string, durationMs: number) {
  const [hold, release, charge] = await entriesOf(callId);
  expect(hold!.slice(0, 2)).toEqual(['hold', 'posted']);
  expect(release!.slice(0, 2)).toEqual(['hold_release', 'posted']);
  expect(charge).toEqual(['test_call', 'posted', (-0.1 * Math.ceil(durationMs / 60_000)).toFixed(4)]);
}

/** Billed nothing: the hold voided and given back. */
async function expectHoldVoided(callId: string) {
  expect((await entriesOf(callId)).map((entry) => entry.slice(0, 2))).toEqual([
    ['hold', 'voided'],
    ['hold_release', 'posted'],
  ]);
}

/** A test call recorded as the API records it on the connection, its workflow not started yet (no hold: billed nothing). */
const recordedTestCall = (to: string, from: string, connection: { id: string; provider: string }) =>
  insertTestCall(
    db,
    { workspaceId: tester.workspaceId, agentId: agent.id, to },
    {
      testLead: { name: 'Ana', fields: {} },
      provider: connection.provider,
      carrierConnectionId: connection.id,
      fromNumber: from,
    },
  );

const startTestCallWorkflow = (callId: string) => startTestCallWorkflowOf(temporal, callId);

/** What would show a call was placed anywhere: the twins' and the simulated carrier's own tables. */
const placedTo = async (to: string) => ({
  twilio: await twilioTwinRecord(db).count('"to" = $1', to),
  telnyx: await telnyxTwinRecord(db).count('"to" = $1', to),
  simulated: await simulatedCarrierRecord(db).count('"to" = $1', to),
});

describe('a test call from a number bound to a carrier connection', () => {
  it('is placed on the Twilio twin, recorded under twilio-twin, walks the script, ends and is billed', async () => {
    const to = '+14155581101';
    await scriptPersona(twilioTwin.baseUrl, { number: to, answers: ANSWERS });
    const callId = await placed(to, twilioCaller);
    const result = await resultOf(callId);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    const call = await db.call.findUniqueOrThrow({ where: { id: callId } });
    expect(call).toMatchObject({
      kind: 'test',
      provider: 'twilio-twin',
      carrierConnectionId: twilioConnection.id,
      fromNumber: twilioCaller,
      status: 'ended',
      outcome: 'answered',
      carrierStatus: 'completed',
      answeredBy: 'human',
    });
    // The twin's own table: exactly this one call, from the caller number, the call's CallSid.
    const twinCalls = await twilioTwinRecord(db).calls('"to" = $1', to);
    expect(twinCalls.map((twinCall) => [twinCall.sid, twinCall.from, twinCall.status])).toEqual([
      [call.providerCallId, twilioCaller, 'completed'],
    ]);
    expect(await placedTo(to)).toEqual({ twilio: 1, telnyx: 0, simulated: 0 });
    // The callbacks were accepted on the connection's routes: the events are the connection's provider's.
    const events = await db.callEvent.findMany({ where: { callId } });
    expect(new Set(events.map((event) => event.provider))).toEqual(new Set(['twilio-twin']));
    // The persona's answers are the transcript, as the twin heard them; the agent's lines are what the twin said.
    const done = await withIntelligence(db, callId);
    const transcript = done.transcript as Transcript;
    expectAnsweredWalk(transcript, WALK);
    const log = await twinLog(twilioTwin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)).toEqual(
      said(transcript, 'lead'),
    );
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual(
      said(transcript, 'agent'),
    );
    expect(result.durationMs).toBe(log.durationSec! * 1000);
    await expectBilledByMinutes(callId, result.durationMs!);
  });

  it('is placed on the Telnyx twin, recorded under telnyx-twin, walks the script, ends and is billed', async () => {
    const to = '+14155581201';
    await scriptTelnyxPersona(telnyxTwin.baseUrl, { number: to, answers: ANSWERS });
    const callId = await placed(to, telnyxCaller);
    const result = await resultOf(callId);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    const call = await db.call.findUniqueOrThrow({ where: { id: callId } });
    expect(call).toMatchObject({
      kind: 'test',
      provider: 'telnyx-twin',
      carrierConnectionId: telnyxConnection.id,
      fromNumber: telnyxCaller,
      status: 'ended',
      outcome: 'answered',
      carrierStatus: 'completed',
    });
    const twinCalls = await telnyxTwinRecord(db).calls('"to" = $1', to);
    expect(twinCalls.map((twinCall) => [twinCall.callControlId, twinCall.from, twinCall.commandId])).toEqual([
      [call.providerCallId, telnyxCaller, call.attemptId],
    ]);
    expect(await placedTo(to)).toEqual({ twilio: 0, telnyx: 1, simulated: 0 });
    const events = await db.callEvent.findMany({ where: { callId } });
    expect(events.map((event) => event.eventId)).toContain(`${call.providerCallId}:call.hangup`);
    expect(new Set(events.map((event) => event.provider))).toEqual(new Set(['telnyx-twin']));
    const done = await withIntelligence(db, callId);
    const transcript = done.transcript as Transcript;
    expectAnsweredWalk(transcript, WALK);
    const log = await telnyxTwinLog(telnyxTwin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)).toEqual(
      said(transcript, 'lead'),
    );
    expect(result.durationMs).toBeGreaterThan(0);
    await expectBilledByMinutes(callId, result.durationMs!);
  });

  it('ends failed at once, never placed and not billed, when the carrier refuses the caller number', async () => {
    const to = '+14155581301';
    const callId = await placed(to, refusedCaller);
    expect(await resultOf(callId)).toEqual({ callId, outcome: 'failed', durationMs: null });
    expect(await db.call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      provider: 'twilio-twin',
      carrierConnectionId: twilioConnection.id,
      status: 'ended',
      outcome: 'failed',
      providerCallId: null,
    });
    expect(await placedTo(to)).toEqual({ twilio: 0, telnyx: 0, simulated: 0 });
    await expectHoldVoided(callId);
  });

  it('ends failed, never placed through another carrier, when its connection was removed after the call was recorded', async () => {
    const to = '+14155581401';
    // Recorded on a connection that is removed before the dial (its number rebound meanwhile: a removal is refused
    // while a number is bound to it).
    const removed = await connectCarrier(db, keyring, {
      workspaceId: tester.workspaceId,
      provider: 'twilio-twin',
      label: 'Removed',
      baseUrl: twilioTwin.baseUrl,
      account: {
        family: 'twilio',
        accountSid: TWILIO_TWIN_ACCOUNT_SID,
        secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN },
      },
    });
    const callId = await recordedTestCall(to, twilioCaller, removed);
    await removeCarrierConnection(db, removed.id);
    await startTestCallWorkflow(callId);
    expect(await resultOf(callId)).toEqual({ callId, outcome: 'failed', durationMs: null });
    expect(await db.call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      provider: 'twilio-twin',
      carrierConnectionId: removed.id,
      status: 'ended',
      outcome: 'failed',
      providerCallId: null,
    });
    expect(await placedTo(to)).toEqual({ twilio: 0, telnyx: 0, simulated: 0 });
  });

  it('never becomes two calls: a dial whose answer was lost is found on the Twilio twin by listing, not dialed again', async () => {
    const to = '+14155581601';
    const callId = await recordedTestCall(to, twilioCaller, twilioConnection);
    // The first dial reached Twilio and its answer and callbacks were lost: the call exists on the twin, unbound.
    const lost = await twilioTwin.client.calls.create({
      to,
      from: twilioCaller,
      twiml: '<Response><Pause length="1"/></Response>',
    });
    await startTestCallWorkflow(callId);
    const adopted = await until(
      () => db.call.findUniqueOrThrow({ where: { id: callId } }),
      (call) => call.providerCallId !== null,
    );
    expect(adopted.providerCallId).toBe(lost.sid);
    expect(await placedTo(to)).toEqual({ twilio: 1, telnyx: 0, simulated: 0 });
    // Its end never comes (no callbacks were asked for): the rest of the wait is reconciliation's, not this test's.
    await temporal.client.workflow.getHandle(testCallWorkflowId(callId)).terminate('adopted: nothing more to see');
  });

  it('never becomes two calls on Telnyx: the retried dial carries the attempt as command_id and answers the first call', async () => {
    const to = '+14155581701';
    const callId = await recordedTestCall(to, telnyxCaller, telnyxConnection);
    const { attemptId } = await db.call.findUniqueOrThrow({ where: { id: callId } });
    // The first dial reached Telnyx with the attempt's command_id; its answer and webhooks were lost.
    const lost = await telnyxTwin.client.calls.dial({
      connection_id: TELNYX_TWIN_CONNECTION_ID,
      to,
      from: telnyxCaller,
      command_id: attemptId,
      webhook_url: lostWebhooks.url(),
    });
    await startTestCallWorkflow(callId);
    const adopted = await until(
      () => db.call.findUniqueOrThrow({ where: { id: callId } }),
      (call) => call.providerCallId !== null,
    );
    expect(adopted.providerCallId).toBe(lost.data!.call_control_id);
    expect(await placedTo(to)).toEqual({ twilio: 0, telnyx: 1, simulated: 0 });
    await temporal.client.workflow.getHandle(testCallWorkflowId(callId)).terminate('adopted: nothing more to see');
  });
});

describe('a test call from a number bound to no connection', () => {
  it('still goes through the simulated carrier', async () => {
    const to = '+14155581502';
    const callId = await placed(to, unboundCaller);
    const result = await resultOf(callId);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    expect(await db.call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      provider: 'simulated',
      carrierConnectionId: null,
      status: 'ended',
      outcome: 'answered',
    });
    expect(await placedTo(to)).toEqual({ twilio: 0, telnyx: 0, simulated: 1 });
    await expectBilledByMinutes(callId, result.durationMs!);
  });
});
