// A test call talks only the minutes its credit hold covers (docs/features/test-calls.md#length), end to end on the real
// servers: the API on the product's conversation (CONVERSATION_ENGINE=relay) with its relay socket, a worker, Temporal
// and PostgreSQL, and the Twilio twin as the carrier, which keeps the time limit it was dialed with and plays the
// caller. The twin's own table and call log say what was really asked and said.
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

// One tenth of real time: a minute of the call is 6 s, so the closing line, 10 s (1 s here) before the carrier's limit,
// is said with room to spare on a loaded machine. The relay socket counts minutes on the same scale.
const TIME_SCALE = 0.1;
const twin = await startTestTwilioTwin(db, { timeScale: TIME_SCALE });
const telnyxTwin = await startTestTelnyxTwin(db, { timeScale: TIME_SCALE });
const simulated = await startTestCarrier(db);
const { api } = await startCarrierPath(db, {
  url,
  temporal,
  keyring,
  fallback: simulated.client,
  // No silence turn within a test: the silent caller below hears nothing more until the time is up.
  api: { conversationEngine: 'relay', testMinuteMs: 60_000 * TIME_SCALE, relaySilenceMs: 60_000 },
});

const callers = ['+14155587001', '+14155587002'];
const TIME_UP_LINE = "I'm sorry, the time for this test is up. Goodbye.";

// Six questions of forty words, each answered in a word: about 110 s of talk (a spoken word is 0.4 s) if not cut. The
// twin's clock counts an answer's words without waiting for them, so short answers keep it close to the real one.
const QUESTIONS = Array.from(
  { length: 6 },
  (_, index) =>
    `Question ${index + 1}: before we send anything out to you, please tell us which colour of the shoes you would ` +
    'like us to send for the order you placed with the shoe shop last week, as we have red, navy and green ones in ' +
    'stock right now?',
);
const ANSWERS = QUESTIONS.map(() => ({ speech: 'Navy.', confidence: 0.9 }));

/** A workspace holding `credits` (0.1 a minute), its caller number on the twin, and the long-talking agent. */
async function testerWith(credits: number, caller: string) {
  const tester = await createTestWorkspace(db, { scopes: ['calls.test', 'calls.view'] });
  await grantCredits(db, tester.workspaceId, credits);
  await connectTwinCaller(db, keyring, twin.baseUrl, tester.workspaceId, caller);
  const agent = await insertShoeShopAgent(db, tester.workspaceId, { questions: QUESTIONS });
  return { ...tester, caller, agentId: agent.id };
}

async function placed(
  tester: Awaited<ReturnType<typeof testerWith>>,
  to: string,
  answers: ReadonlyArray<(typeof ANSWERS)[number] | null>,
) {
  const { caller } = tester;
  await scriptPersona(twin.baseUrl, { number: to, answers });
  const response = await api.request('POST', '/calls/test', {
    key: tester.key,
    body: { agentId: tester.agentId, to, from: caller, lead: { name: 'Ana', fields: {} } },
  });
  expect(response.status).toBe(202);
  const { callId } = (await response.json()) as { callId: string };
  const result = (await temporal.client.workflow.getHandle(testCallWorkflowId(callId)).result()) as TestCallResult;
  const call = await db.call.findUniqueOrThrow({ where: { id: callId } });
  const twinCall = await twilioTwinRecord(db).call(call.providerCallId!);
  const log = await twinLog(twin.baseUrl, call.providerCallId!);
  const agentSaid = log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text);
  return { callId, result, timeLimitSec: (twinCall.request as { timeLimitSec: number }).timeLimitSec, agentSaid };
}

/** The call's ledger entries: [kind, status, amount], the hold first. */
const entriesOf = (callId: string) => testCallEntries(db, callId);

describe('a test call is as long as its hold covers', () => {
  it('held for one minute: dialed with a 60 s limit, says the closing line before it and ends; charged the hold', async () => {
    const tester = await testerWith(0.1, callers[0]!);
    // The caller stays silent after the first question: without the closing line the call would wait for the
    // carrier's limit.
    const { callId, result, timeLimitSec, agentSaid } = await placed(tester, '+14155587101', [null]);
    // Before issue 40 every test call was dialed with the longest call (1800 s) whatever it held.
    expect(timeLimitSec).toBe(60);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    expect(result.durationMs).toBeGreaterThan(0);
    expect(result.durationMs).toBeLessThanOrEqual(60_000);
    // The opening, the first question, then the closing line the relay socket said as the time ran out.
    expect(agentSaid).toEqual([expect.stringMatching(/^Hello Ana/), QUESTIONS[0], TIME_UP_LINE]);
    // Charged what it held, never more: the one minute.
    expect(await entriesOf(callId)).toEqual([
      ['hold', 'posted', '-0.1000'],
      ['hold_release', 'posted', '0.1000'],
      ['test_call', 'posted', '-0.1000'],
    ]);
  });

  it('held for three minutes: dialed with a 180 s limit, walks the whole script, and no closing line is said', async () => {
    const tester = await testerWith(0.3, callers[1]!);
    const { callId, result, timeLimitSec, agentSaid } = await placed(tester, '+14155587201', ANSWERS);
    expect(timeLimitSec).toBe(180);
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    expect(agentSaid).not.toContain(TIME_UP_LINE);
    expect(agentSaid.at(-1)).toBe('Thank you, goodbye.');
    const [hold, , charge] = await entriesOf(callId);
    expect(hold).toEqual(['hold', 'posted', '-0.3000']);
    expect(charge).toEqual(['test_call', 'posted', (-0.1 * Math.ceil(result.durationMs! / 60_000)).toFixed(4)]);
  });
});

describe('on Telnyx', () => {
  it('held for two minutes: dialed with time_limit_secs 120, says the closing line before it and ends', async () => {
    const tester = await createTestWorkspace(db, { scopes: ['calls.test', 'calls.view'] });
    await grantCredits(db, tester.workspaceId, 0.2);
    const caller = '+14155587003';
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
    const to = '+14155587301';
    // Silent after the first question: without the closing line the call would wait for the carrier's limit.
    await scriptTelnyxPersona(telnyxTwin.baseUrl, { number: to, answers: [null] });
    const response = await api.request('POST', '/calls/test', {
      key: tester.key,
      body: { agentId: agent.id, to, from: caller, lead: { name: 'Ana', fields: {} } },
    });
    expect(response.status).toBe(202);
    const { callId } = (await response.json()) as { callId: string };
    const result = (await temporal.client.workflow.getHandle(testCallWorkflowId(callId)).result()) as TestCallResult;
    expect(result).toMatchObject({ callId, outcome: 'answered' });
    expect(result.durationMs).toBeLessThanOrEqual(120_000);
    const call = await db.call.findUniqueOrThrow({ where: { id: callId } });
    const twinCall = await telnyxTwinRecord(db).call(call.providerCallId!);
    expect((twinCall.request as { timeLimitSecs: number }).timeLimitSecs).toBe(120);
    const log = await telnyxTwinLog(telnyxTwin.baseUrl, call.providerCallId!);
    const agentSaid = log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text);
    expect(agentSaid.at(-1)).toBe(TIME_UP_LINE);
    const charged = (await testCallEntries(db, callId)).find(([kind]) => kind === 'test_call');
    // Never more than the hold.
    expect(Number(charged![2])).toBeGreaterThanOrEqual(-0.2);
  });
});
