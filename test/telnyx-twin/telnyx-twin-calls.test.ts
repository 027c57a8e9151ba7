// The Telnyx twin's Call Control driven through the official `telnyx` SDK: the dial and its Ed25519-signed webhooks
// (verified by the SDK), each last digit, the conversation commands with the persona's answers, answering-machine
// detection, hang-up, command_id idempotency, Telnyx's errors, and conformance to the vendored description
// (docs/features/carriers/twins.md#the-telnyx-twin).
import { beforeAll, describe, expect, it } from 'vitest';
import Telnyx from 'telnyx';
import type { Database } from '../../lib/database';
import { useTestDatabase } from '../support/database';
import { until } from '../support/until';
import {
  clientState,
  exchangeProblems,
  OTHER_ACCOUNT,
  scriptTelnyxPersona,
  startTestTelnyxTwin,
  startWebhookReceiver,
  TELNYX_TWIN_CONNECTION_ID,
  telnyxTwinLog,
  telnyxTwinRecord,
  untilHungUp,
} from '../support/telnyx-twin';

let db: Database;
let twin: Awaited<ReturnType<typeof startTestTelnyxTwin>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const FROM = '+14155550000';

beforeAll(async () => {
  ({ db } = await useTestDatabase());
  // 1 simulated second is 50 ms: the person waits 30 s (1.5 s) of silence before hanging up, time for a few commands
  // even on a loaded machine (at 20 ms a second, one run in several lost that race).
  twin = await startTestTelnyxTwin(db, { timeScale: 0.05 });
  receiver = await startWebhookReceiver();
});

async function dial(to: string, extra: Record<string, unknown> = {}) {
  const { data } = await twin.client.calls.dial({
    connection_id: TELNYX_TWIN_CONNECTION_ID,
    to,
    from: FROM,
    webhook_url: receiver.url(),
    client_state: clientState(`attempt:${to}`),
    ...extra,
  });
  return data!.call_control_id;
}

const untilEvent = (id: string, eventType: string, timeoutMs = 20_000) =>
  until(
    async () => receiver.of(id),
    (webhooks) => webhooks.some((webhook) => webhook.eventType === eventType),
    timeoutMs,
  );

const apiError = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Telnyx.APIError);
  return error as InstanceType<typeof Telnyx.APIError> & { error: { errors: Record<string, unknown>[] } };
};

describe('the dial and its webhooks', () => {
  it('answers the call, then sends call.initiated, call.answered and call.hangup in order, signed (the SDK verifies each), client_state echoed', async () => {
    const id = await dial('+14155550310');
    expect(id).toMatch(/^v3:/);
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.map((webhook) => webhook.eventType)).toEqual(['call.initiated', 'call.answered', 'call.hangup']);
    expect(webhooks.every((webhook) => webhook.verified)).toBe(true);
    expect(webhooks.flatMap((webhook) => webhook.problems)).toEqual([]);
    expect(webhooks.map((webhook) => webhook.payload.client_state)).toEqual(
      Array(3).fill(clientState('attempt:+14155550310')),
    );
    expect(webhooks[0]!.payload).toMatchObject({ direction: 'outgoing', from: FROM, to: '+14155550310' });
    // Left with nothing to hear, the person hangs up after the number's talk time (31 s for ...10).
    expect(webhooks[2]!.payload).toMatchObject({ hangup_cause: 'normal_clearing', hangup_source: 'callee' });
    const { data } = await twin.client.calls.retrieveStatus(id);
    expect(data).toMatchObject({ call_control_id: id, is_alive: false, call_duration: 31 });
  });

  it('a tampered body or another key does not verify', async () => {
    const id = await dial('+14155550320');
    const [initiated] = await untilEvent(id, 'call.initiated');
    const verifier = new Telnyx({ apiKey: 'KEY_x', publicKey: 'vFU1K+KSPH4P/9fIAC0qGby4Ro/BkJ7ofLLHFLwJtxA=' });
    await expect(verifier.webhooks.unwrap(initiated!.body, { headers: initiated!.headers })).resolves.toBeTruthy();
    await expect(
      verifier.webhooks.unwrap(initiated!.body.replace('outgoing', 'incoming'), { headers: initiated!.headers }),
    ).rejects.toThrow();
    const other = Buffer.alloc(32, 1).toString('base64');
    await expect(
      verifier.webhooks.unwrap(initiated!.body, { headers: initiated!.headers, key: other }),
    ).rejects.toThrow();
  });

  it.each([
    ['+14155550315', 'user_busy', '486'],
    ['+14155550316', 'timeout', '487'],
    ['+14155550318', 'unspecified', '503'],
    ['+14155550319', 'not_found', '404'],
  ])('%s is not answered: call.hangup with %s (SIP %s), never call.answered', async (to, cause, sip) => {
    const id = await dial(to, { timeout_secs: 10 });
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.map((webhook) => webhook.eventType)).toEqual(['call.initiated', 'call.hangup']);
    expect(webhooks[1]!.payload).toMatchObject({ hangup_cause: cause, sip_hangup_cause: sip, state: 'hangup' });
    expect(webhooks.every((webhook) => webhook.verified && webhook.problems.length === 0)).toBe(true);
  });

  it('digit 7 is answered, by a machine whose greeting is in the log', async () => {
    const machine = await dial('+14155550317');
    expect((await untilHungUp(receiver, machine)).map((webhook) => webhook.eventType)).toContain('call.answered');
    expect((await telnyxTwinLog(twin.baseUrl, machine)).log[0]).toMatchObject({ speaker: 'callee', kind: 'greeting' });
  });
});

describe('a scripted conversation', () => {
  it('speaks, transcribes the persona’s answers to questions, and hangs up; each side’s words in the log', async () => {
    const to = '+14155550330';
    await scriptTelnyxPersona(twin.baseUrl, { number: to, answers: ['Yes, this is a good time.', null] });
    const id = await dial(to);
    await untilEvent(id, 'call.answered');
    await twin.client.calls.actions.startTranscription(id, {
      transcription_engine: 'Google',
      transcription_engine_config: { transcription_engine: 'Google', language: 'en', hints: ['red', 'blue'] },
    });
    const speak = (payload: string, state?: string) =>
      twin.client.calls.actions.speak(id, {
        payload,
        voice: 'Telnyx.KokoroTTS.af',
        ...(state && { client_state: clientState(state) }),
      });
    await speak('Hello, this is Ana from Acme.', 'turn:1');
    await speak('Is now a good time to talk?');
    const afterFirst = await untilEvent(id, 'call.transcription');
    await speak('Do you want to hear more?');
    await until(
      async () => receiver.of(id).filter((webhook) => webhook.eventType === 'call.speak.ended'),
      (ended) => ended.length === 3,
      20_000,
    );
    await twin.client.calls.actions.hangup(id, {});
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.map((webhook) => webhook.eventType)).toEqual([
      'call.initiated',
      'call.answered',
      'call.speak.started',
      'call.speak.ended',
      'call.speak.started',
      'call.speak.ended',
      'call.transcription',
      'call.speak.started',
      'call.speak.ended',
      'call.hangup',
    ]);
    expect(
      afterFirst.find((webhook) => webhook.eventType === 'call.transcription')!.payload.transcription_data,
    ).toEqual({
      confidence: 0.9,
      is_final: true,
      transcript: 'Yes, this is a good time.',
    });
    // The command's client_state goes with that command's webhooks and every later one.
    expect(webhooks[2]!.payload.client_state).toBe(clientState('turn:1'));
    expect(webhooks.at(-1)!.payload).toMatchObject({
      hangup_cause: 'normal_clearing',
      hangup_source: 'caller',
      client_state: clientState('turn:1'),
    });
    expect(webhooks.every((webhook) => webhook.verified && webhook.problems.length === 0)).toBe(true);
    const { log } = await telnyxTwinLog(twin.baseUrl, id);
    expect(log.filter((entry) => entry.kind === 'say' || entry.kind === 'speech').map((entry) => entry.text)).toEqual([
      'Hello, this is Ana from Acme.',
      'Is now a good time to talk?',
      'Yes, this is a good time.',
      'Do you want to hear more?',
    ]);
    expect(log.filter((entry) => entry.kind === 'silence')).toHaveLength(1);
  });

  it('with interim_results, sends the words heard so far as each one ends (is_final false), then the final result', async () => {
    const to = '+14155550331';
    await scriptTelnyxPersona(twin.baseUrl, {
      number: to,
      answers: [{ speech: 'Three pairs, please.', confidence: 0.8 }],
    });
    const id = await dial(to);
    await untilEvent(id, 'call.answered');
    await twin.client.calls.actions.startTranscription(id, {
      transcription_engine: 'Google',
      transcription_engine_config: { transcription_engine: 'Google', language: 'en', interim_results: true },
    });
    await twin.client.calls.actions.speak(id, { payload: 'How many pairs?', voice: 'female' });
    const webhooks = await until(
      async () => receiver.of(id).filter((webhook) => webhook.eventType === 'call.transcription'),
      (heard) => heard.some((webhook) => webhook.payload.transcription_data?.is_final === true),
      20_000,
    );
    expect(webhooks.map((webhook) => webhook.payload.transcription_data)).toEqual([
      { is_final: false, transcript: 'Three' },
      { is_final: false, transcript: 'Three pairs,' },
      { confidence: 0.8, is_final: true, transcript: 'Three pairs, please.' },
    ]);
    expect(webhooks.every((webhook) => webhook.verified && webhook.problems.length === 0)).toBe(true);
    await twin.client.calls.actions.hangup(id, {});
  });

  it('the default person answers a question with one of the hints; a DTMF gather gets the scripted keys or times out', async () => {
    const to = '+14155550340';
    await scriptTelnyxPersona(twin.baseUrl, { number: to, answers: ['42'] });
    const id = await dial(to);
    await untilEvent(id, 'call.answered');
    await twin.client.calls.actions.gatherUsingSpeak(id, {
      payload: 'Enter your order number.',
      voice: 'female',
      maximum_digits: 4,
    });
    await twin.client.calls.actions.gatherUsingSpeak(id, {
      payload: 'Press one.',
      voice: 'female',
      timeout_millis: 2000,
    });
    await twin.client.calls.actions.startTranscription(id, {
      transcription_engine_config: { transcription_engine: 'Google', hints: ['red', 'blue', 'green'] },
    });
    await twin.client.calls.actions.speak(id, { payload: 'Which colour do you like?', voice: 'female' });
    const webhooks = await untilEvent(id, 'call.transcription');
    const gathers = webhooks.filter((webhook) => webhook.eventType === 'call.gather.ended');
    expect(gathers.map((webhook) => [webhook.payload.status, webhook.payload.digits])).toEqual([
      ['valid', '42'],
      ['timeout', ''],
    ]);
    const transcript = webhooks.find((webhook) => webhook.eventType === 'call.transcription')!.payload
      .transcription_data.transcript as string;
    expect(['red', 'blue', 'green'].some((hint) => transcript.includes(hint))).toBe(true);
    await twin.client.calls.actions.hangup(id, {});
    await untilHungUp(receiver, id);
  });
});

describe('answering-machine detection', () => {
  it.each([
    ['+14155550350', 'detect', [['call.machine.detection.ended', 'human']]],
    ['+14155550357', 'detect', [['call.machine.detection.ended', 'machine']]],
    [
      '+14155550357',
      'greeting_end',
      [
        ['call.machine.detection.ended', 'machine'],
        ['call.machine.greeting.ended', 'beep_detected'],
      ],
    ],
    ['+14155550350', 'premium', [['call.machine.premium.detection.ended', 'human_residence']]],
    [
      '+14155550357',
      'premium',
      [
        ['call.machine.premium.detection.ended', 'machine'],
        ['call.machine.premium.greeting.ended', 'beep_detected'],
      ],
    ],
  ])('%s with %s', async (to, mode, expected) => {
    const id = await dial(to, { answering_machine_detection: mode });
    const webhooks = await untilHungUp(receiver, id);
    const amd = webhooks.filter((webhook) => webhook.eventType.startsWith('call.machine'));
    expect(amd.map((webhook) => [webhook.eventType, webhook.payload.result])).toEqual(expected);
    expect(amd.every((webhook) => webhook.verified && webhook.problems.length === 0)).toBe(true);
    expect((await telnyxTwinLog(twin.baseUrl, id)).amdResult).toBe(expected[0]![1]);
  });

  it('a persona scripted as a fax is a machine to standard detection and fax_detected to premium', async () => {
    await scriptTelnyxPersona(twin.baseUrl, { number: '+14155550360', answeredBy: 'fax' });
    const standard = await untilHungUp(receiver, await dial('+14155550360', { answering_machine_detection: 'detect' }));
    expect(standard.find((webhook) => webhook.eventType === 'call.machine.detection.ended')!.payload.result).toBe(
      'machine',
    );
    const premium = await untilHungUp(receiver, await dial('+14155550360', { answering_machine_detection: 'premium' }));
    expect(
      premium.find((webhook) => webhook.eventType === 'call.machine.premium.detection.ended')!.payload.result,
    ).toBe('fax_detected');
  });
});

describe('hang-up and commands', () => {
  it('a hang-up before the answer is originator_cancel; commands then answer 422 as Telnyx does', async () => {
    // A number nobody answers, ringing its whole timeout (600 s: 30 s at this scale), so that the hang-up surely comes
    // before any answer, however slow the machine.
    const id = await dial('+14155550376', { timeout_secs: 600 });
    const early = await apiError(twin.client.calls.actions.speak(id, { payload: 'Hello', voice: 'female' }));
    expect(early.status).toBe(422);
    expect(early.error.errors[0]).toMatchObject({ code: '90034', title: 'Call not answered yet' });
    await twin.client.calls.actions.hangup(id, {});
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.at(-1)!.payload).toMatchObject({ hangup_cause: 'originator_cancel', hangup_source: 'caller' });
    const late = await apiError(twin.client.calls.actions.hangup(id, {}));
    expect(late.status).toBe(422);
    expect(late.error.errors[0]).toMatchObject({ code: '90018', title: 'Call has already ended' });
  });

  it('a hang-up while speaking ends the speak with call_hangup', async () => {
    const id = await dial('+14155550380');
    await untilEvent(id, 'call.answered');
    // 76 words: 30 s of speech, 1.5 s here, which the hang-up beats even on a loaded machine.
    await twin.client.calls.actions.speak(id, {
      payload: 'This is a rather long sentence that takes a good few seconds to say out loud on the phone. '.repeat(4),
      voice: 'female',
    });
    await untilEvent(id, 'call.speak.started');
    await twin.client.calls.actions.hangup(id, {});
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.slice(-2).map((webhook) => [webhook.eventType, webhook.payload.status ?? null])).toEqual([
      ['call.speak.ended', 'call_hangup'],
      ['call.hangup', null],
    ]);
  });
});

describe('command_id', () => {
  it('a dial sent again with the same command_id is the same call: one row, one call.initiated', async () => {
    const first = await dial('+14155550390', { command_id: 'attempt-42' });
    const again = await dial('+14155550390', { command_id: 'attempt-42' });
    expect(again).toBe(first);
    expect(await telnyxTwinRecord(db).count(`"commandId" = 'attempt-42'`)).toBe(1);
    const other = await dial('+14155550390', { command_id: 'attempt-43' });
    expect(other).not.toBe(first);
    const webhooks = await untilHungUp(receiver, first);
    expect(webhooks.filter((webhook) => webhook.eventType === 'call.initiated')).toHaveLength(1);
  });

  it('a command sent again with its command_id is done once', async () => {
    const id = await dial('+14155550391');
    await untilEvent(id, 'call.answered');
    for (let attempt = 0; attempt < 3; attempt += 1)
      await twin.client.calls.actions.speak(id, { payload: 'Hello there.', voice: 'female', command_id: 'say-1' });
    await twin.client.calls.actions.hangup(id, { command_id: 'bye' });
    await twin.client.calls.actions.hangup(id, { command_id: 'bye' });
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.filter((webhook) => webhook.eventType === 'call.speak.started')).toHaveLength(1);
    expect(webhooks.filter((webhook) => webhook.eventType === 'call.hangup')).toHaveLength(1);
  });
});

describe('a warm transfer: a linked dial, then a bridge (BridgeCall)', () => {
  it('shares the linked call’s session and from, joins two answered calls once, and hangs one up with the other', async () => {
    const lead = await dial('+14155550392');
    await untilEvent(lead, 'call.answered');
    // The person on the linked call waits for it (on hold) rather than hanging up for silence.
    const human = await dial('+14155550301', { link_to: lead, bridge_intent: true, from: '+14155550999' });
    await untilEvent(human, 'call.answered');
    const unknown = await apiError(
      twin.client.calls.actions.bridge(lead, { call_control_id_to_bridge_with: 'v3:none' }),
    );
    expect(unknown.status).toBe(422);
    for (let attempt = 0; attempt < 2; attempt += 1)
      await twin.client.calls.actions.bridge(lead, { call_control_id_to_bridge_with: human, command_id: 'bridge' });
    await untilEvent(human, 'call.bridged');
    await twin.client.calls.actions.hangup(human, {});
    const webhooks = await untilHungUp(receiver, lead);
    expect(webhooks.filter((webhook) => webhook.eventType === 'call.bridged')).toHaveLength(1);
    expect(webhooks.find((webhook) => webhook.eventType === 'call.hangup')!.payload.hangup_cause).toBe(
      'normal_clearing',
    );
    const humanWebhooks = receiver.of(human);
    expect(humanWebhooks[0]!.payload.call_session_id).toBe(webhooks[0]!.payload.call_session_id);
    expect(humanWebhooks[0]!.payload.from).toBe(FROM);
    expect(humanWebhooks.filter((webhook) => webhook.eventType === 'call.bridged')).toHaveLength(1);
  });
});

describe("Telnyx's errors", () => {
  it('a bad key is 401, another account’s call or an unknown one 404, bad parameters 422, in Telnyx’s shape', async () => {
    const unauthorized = await apiError(twin.clientWith('KEY_wrong').calls.retrieveStatus('v3:nothing'));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.error.errors[0]).toMatchObject({ code: '10009', title: 'Authentication failed' });
    const unknown = await apiError(twin.client.calls.retrieveStatus('v3:unknown'));
    expect(unknown.status).toBe(404);
    expect(unknown.error.errors[0]).toMatchObject({ code: '10005', title: 'Resource not found' });
    const id = await dial('+14155550395');
    const foreign = await apiError(twin.clientWith(OTHER_ACCOUNT.apiKeys[0]!).calls.retrieveStatus(id));
    expect(foreign.status).toBe(404);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ to: undefined }, '10004', '/to'],
      [{ to: '4155550395' }, '10016', '/to'],
      [{ connection_id: '999' }, '10015', '/connection_id'],
      [{ answering_machine_detection: 'maybe' }, '10032', '/answering_machine_detection'],
      [{ timeout_secs: 2 }, '10033', '/timeout_secs'],
      [{ client_state: 'not base64!' }, '10026', '/client_state'],
    ];
    for (const [change, code, pointer] of cases) {
      const bad = await apiError(
        twin.client.calls.dial({
          connection_id: TELNYX_TWIN_CONNECTION_ID,
          to: '+14155550396',
          from: FROM,
          webhook_url: receiver.url(),
          ...change,
        } as never),
      );
      expect(bad.status).toBe(422);
      expect(bad.error.errors[0]).toMatchObject({ code, source: { pointer } });
    }
    expect(await telnyxTwinRecord(db).count(`"to" = '+14155550396'`)).toBe(0);
  });
});

describe('conformance', () => {
  it('every request the SDK sent and every answer the twin gave in this file fits the vendored description', () => {
    // Requests the twin refused were bad on purpose: their answers are checked, and the requests it took.
    const answers = exchangeProblems(twin.exchanges).filter((problem) => !problem.includes(' request: '));
    expect(answers).toEqual([]);
    expect(exchangeProblems(twin.exchanges.filter((exchange) => exchange.status < 300))).toEqual([]);
    expect(twin.exchanges.filter((exchange) => exchange.status >= 400).length).toBeGreaterThan(5);
    expect(twin.exchanges.length).toBeGreaterThan(30);
  });
});
