// A test call walked without the relay (the script walk, the default engine) says the time-up line when the minutes
// its credit hold covers run out, and hangs up before the carrier's limit (docs/features/test-calls.md#length), end
// to end on the real servers: the API, a worker, Temporal and PostgreSQL, and the Twilio and Telnyx twins as the
// carriers, which keep the time limit they were dialed with and play the lead. The twins' logs say what was said.
import { describe, expect, it } from 'vitest';
import { grantCredits } from '../../lib/door/workspace-admin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import type { TestCallResult } from '../../lib/test-calls/test-call';
import { testCallEntries } from '../support/calls';
import { startTestCarrier } from '../support/carrier';
import { connectCallers, insertShoeShopAgent, startCarrierPath, TELNYX_TWIN_ACCOUNT } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { scriptTelnyxPersona, startTestTelnyxTwin, telnyxTwinLog, telnyxTwinRecord } from '../support/telnyx-twin';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona, startTestTwilioTwin, twilioTwinRecord, twinLog } from '../support/twilio-twin';
import { connectTwinCaller } from '../support/twilio-twin-stack';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));

// A fifth of real time: a minute of the call is 12 s. The walk reckons the time left from the answer on the same
// scale (testMinuteMs); the twins' answer timestamps are whole seconds, which here is up to 5 s of the call's time.
const TIME_SCALE = 0.2;
const twin = await startTestTwilioTwin(db, { timeScale: TIME_SCALE });
const telnyxTwin = await startTestTelnyxTwin(db, { timeScale: TIME_SCALE });
const simulated = await startTestCarrier(db);
const { api } = await startCarrierPath(db, {
  url,
  temporal,
  keyring,
  fallback: simulated.client,
  // The script walk (CONVERSATION_ENGINE=gather); Telnyx's 6 s question wait on the twins' scale.
  api: {
    conversationEngine: 'gather',
    testMinuteMs: 60_000 * TIME_SCALE,
    telnyxAnswerTimeoutMs: 6_000 * TIME_SCALE,
    sweepQuestionWaits: {},
  },
});

const TIME_UP_LINE = "I'm sorry, the time for this test is up. Goodbye.";

// Six questions of forty-three words, each answered in a word: about 17 s a question and 2 s an answer, some 2 minutes
// of talk if not cut. A one-minute hold holds two or three of them.
const QUESTIONS = Array.from(
  { length: 6 },
  (_, index) =>
    `Question ${index + 1}: before we send anything out to you, please tell us which colour of the shoes you would ` +
    'like us to send for the order you placed with the shoe shop last week, as we have red, navy and green ones in ' +
    'stock right now?',
);
const ANSWERS = QUESTIONS.map(() => ({ speech: 'Navy.', confidence: 0.9 }));

/** The test call's end and its ledger entries, once its workflow has billed it. */
async function placedTestCall(key: string, agentId: string, to: string, from: string) {
  const response = await api.request('POST', '/calls/test', {
    key,
    body: { agentId, to, from, lead: { name: 'Ana', fields: {} } },
  });
  expect(response.status).toBe(202);
  const { callId } = (await response.json()) as { callId: string };
  const result = (await temporal.client.workflow.getHandle(testCallWorkflowId(callId)).result()) as TestCallResult;
  const call = await db.call.findUniqueOrThrow({ where: { id: callId } });
  const turns = await db.callTurn.findMany({ where: { callId }, orderBy: [{ step: 'asc' }, { part: 'asc' }] });
  return { callId, result, providerCallId: call.providerCallId!, turns, entries: await testCallEntries(db, callId) };
}

/** Charged the one minute held, never more. */
const ONE_MINUTE_CHARGED = [
  ['hold', 'posted', '-0.1000'],
  ['hold_release', 'posted', '0.1000'],
  ['test_call', 'posted', '-0.1000'],
];

describe('a test call on the script walk, held for one minute', () => {
  it('on Twilio: questions while they fit, then the time-up line and the hang-up before the 60 s limit', async () => {
    const tester = await createTestWorkspace(db, { scopes: ['calls.test', 'calls.view'] });
    await grantCredits(db, tester.workspaceId, 0.1);
    const caller = '+14155588001';
    await connectTwinCaller(db, keyring, twin.baseUrl, tester.workspaceId, caller);
    const agent = await insertShoeShopAgent(db, tester.workspaceId, { questions: QUESTIONS });
    const to = '+14155588101';
    await scriptPersona(twin.baseUrl, { number: to, answers: ANSWERS });

    const { callId, result, providerCallId, turns, entries } = await placedTestCall(tester.key, agent.id, to, caller);
    const twinCall = await twilioTwinRecord(db).call(providerCallId);
    expect((twinCall.request as { timeLimitSec: number }).timeLimitSec).toBe(60);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    const { log, durationSec } = await twinLog(twin.baseUrl, providerCallId);
    const agentSaid = log.filter((entry) => entry.kind === 'say').map((entry) => entry.text);
    // The opening and the first question, at least one more while it fitted, then the time-up line, said once, last:
    // never the script's closing, which the six questions would have reached.
    expect(agentSaid.slice(0, 2)).toEqual([expect.stringMatching(/^Hello Ana/), QUESTIONS[0]]);
    expect(agentSaid.at(-1)).toBe(TIME_UP_LINE);
    expect(agentSaid.filter((text) => text === TIME_UP_LINE)).toHaveLength(1);
    expect(agentSaid).not.toContain(QUESTIONS.at(-1));
    // The product hung up after the line, before the carrier's limit would have ended the call.
    expect(log.at(-1)).toMatchObject({ speaker: 'agent', kind: 'hangup' });
    expect(durationSec).toBeLessThan(60);
    expect(result.durationMs).toBeLessThan(60_000);
    // The transcript: the lead's last answer kept, the time-up line after it.
    expect(turns.at(-1)).toMatchObject({ speaker: 'agent', text: TIME_UP_LINE });
    expect(turns.at(-2)).toMatchObject({ speaker: 'lead', text: 'Navy.', part: 0 });
    expect(entries).toEqual(ONE_MINUTE_CHARGED);
  });

  it('on Telnyx: the time-up line spoken, then the hang-up before time_limit_secs 60', async () => {
    const tester = await createTestWorkspace(db, { scopes: ['calls.test', 'calls.view'] });
    await grantCredits(db, tester.workspaceId, 0.1);
    const caller = '+14155588002';
    await connectCallers(
      db,
      keyring,
      {
        workspaceId: tester.workspaceId,
        provider: 'telnyx-twin',
        baseUrl: telnyxTwin.baseUrl,
        account: TELNYX_TWIN_ACCOUNT,
      },
      caller,
    );
    const agent = await insertShoeShopAgent(db, tester.workspaceId, { questions: QUESTIONS });
    const to = '+14155588201';
    await scriptTelnyxPersona(telnyxTwin.baseUrl, { number: to, answers: ANSWERS });

    const { callId, result, providerCallId, turns, entries } = await placedTestCall(tester.key, agent.id, to, caller);
    const twinCall = await telnyxTwinRecord(db).call(providerCallId);
    expect((twinCall.request as { timeLimitSecs: number }).timeLimitSecs).toBe(60);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    const { log, hangupCause, durationSec } = await telnyxTwinLog(telnyxTwin.baseUrl, providerCallId);
    const agentSaid = log.filter((entry) => entry.kind === 'say').map((entry) => entry.text);
    expect(agentSaid.slice(0, 2)).toEqual([expect.stringMatching(/^Hello Ana/), QUESTIONS[0]]);
    expect(agentSaid.at(-1)).toBe(TIME_UP_LINE);
    expect(agentSaid.filter((text) => text === TIME_UP_LINE)).toHaveLength(1);
    // Hung up by the product once the line was said, not cut by the carrier's limit.
    expect(hangupCause).not.toBe('time_limit');
    expect(durationSec).toBeLessThan(60);
    expect(result.durationMs).toBeLessThan(60_000);
    expect(turns.at(-1)).toMatchObject({ speaker: 'agent', text: TIME_UP_LINE });
    expect(entries).toEqual(ONE_MINUTE_CHARGED);
  });
});
