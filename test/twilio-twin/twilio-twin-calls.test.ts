// A call's life on the Twilio twin, driven through the official `twilio` SDK: signed status callbacks, the outcome of
// each last digit, TwiML obeyed with the persona's answers, answering-machine detection, hang-up and redirect
// (docs/features/carriers/twins.md#the-twilio-twin).
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultAnswer } from '../../simulators/twilio-twin/persona';
import { useTestDatabase } from '../support/database';
import { until } from '../support/until';
import { ended, scriptPersona, startProductStandIn, startTestTwilioTwin, twiml, twinLog } from '../support/twilio-twin';

let twin: Awaited<ReturnType<typeof startTestTwilioTwin>>;
let product: Awaited<ReturnType<typeof startProductStandIn>>;
const FROM = '+14155550000';
const ALL_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];

beforeAll(async () => {
  const { db } = await useTestDatabase();
  twin = await startTestTwilioTwin(db);
  product = await startProductStandIn();
});

/** Dials `to` with its own TwiML and status callback paths; answers the call's sid and its paths. */
async function dial(to: string, document: string, extra: Record<string, unknown> = {}) {
  const id = Math.random().toString(36).slice(2);
  product.routes.set(`/${id}/twiml`, () => twiml(document));
  const call = await twin.client.calls.create({
    to,
    from: FROM,
    url: `${product.baseUrl}/${id}/twiml`,
    statusCallback: `${product.baseUrl}/${id}/status`,
    statusCallbackEvent: ALL_EVENTS,
    ...extra,
  });
  const callbacks = () => product.at(`/${id}/status`);
  return { sid: call.sid, id, callbacks, twimlRequests: () => product.at(`/${id}/twiml`) };
}

/** The status callbacks once the terminal one has arrived. */
async function allCallbacks(call: Awaited<ReturnType<typeof dial>>) {
  await ended(twin.client, call.sid);
  return until(
    async () => call.callbacks(),
    (callbacks) =>
      callbacks.some((callback) =>
        ['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(callback.params.CallStatus!),
      ),
    10_000,
  );
}

describe('status callbacks', () => {
  it('are sent for each subscribed event, signed as Twilio signs them (the SDK validates each), in sequence', async () => {
    const call = await dial('+14155550310', '<Say>Hello, this is a short call.</Say>');
    const callbacks = await allCallbacks(call);
    expect(callbacks.map((callback) => callback.params.CallStatus)).toEqual([
      'initiated',
      'ringing',
      'in-progress',
      'completed',
    ]);
    expect(callbacks.every((callback) => callback.valid && callback.method === 'POST')).toBe(true);
    expect(callbacks.map((callback) => callback.params.SequenceNumber)).toEqual(['0', '1', '2', '3']);
    const completed = callbacks.at(-1)!.params;
    expect(completed).toMatchObject({
      CallSid: call.sid,
      AccountSid: 'ACdeadbeefdeadbeefdeadbeefdeadbeef',
      From: FROM,
      To: '+14155550310',
      Direction: 'outbound-api',
      ApiVersion: '2010-04-01',
      CallbackSource: 'call-progress-events',
      // "Hello, this is a short call." is 6 words: 2.4 s of speech, so 3 s.
      CallDuration: '3',
      SipResponseCode: '200',
    });
    expect(completed.Timestamp).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    expect(completed.AnsweredBy).toBeUndefined();
    // A tampered parameter or another token would not pass.
    expect(callbacks.every((callback) => callback.headers['i-twilio-idempotency-token'])).toBe(true);
  });

  it('without StatusCallbackEvent, only the completed event is sent', async () => {
    const id = 'default-events';
    product.routes.set(`/${id}/twiml`, () => twiml('<Hangup/>'));
    const call = await twin.client.calls.create({
      to: '+14155550311',
      from: FROM,
      url: `${product.baseUrl}/${id}/twiml`,
      statusCallback: `${product.baseUrl}/${id}/status`,
    });
    await ended(twin.client, call.sid);
    await until(
      async () => product.at(`/${id}/status`),
      (received) => received.length > 0,
      10_000,
    );
    expect(product.at(`/${id}/status`).map((callback) => callback.params.CallStatus)).toEqual(['completed']);
  });
});

describe("each last digit's outcome", () => {
  it.each([
    ['+14155550320', 'completed', ['initiated', 'ringing', 'in-progress', 'completed'], '200'],
    ['+14155550325', 'busy', ['initiated', 'ringing', 'busy'], '486'],
    ['+14155550326', 'no-answer', ['initiated', 'ringing', 'no-answer'], '487'],
    ['+14155550327', 'completed', ['initiated', 'ringing', 'in-progress', 'completed'], '200'],
    ['+14155550328', 'failed', ['initiated', 'failed'], '503'],
    ['+14155550329', 'failed', ['initiated', 'failed'], '404'],
  ])('%s ends %s', async (to, status, statuses, sip) => {
    const call = await dial(to, '<Say>Hello.</Say>');
    const callbacks = await allCallbacks(call);
    expect(callbacks.map((callback) => callback.params.CallStatus)).toEqual(statuses);
    expect(callbacks.at(-1)!.params.SipResponseCode).toBe(sip);
    const fetched = await twin.client.calls(call.sid).fetch();
    expect(fetched.status).toBe(status);
    expect(call.twimlRequests()).toHaveLength(status === 'completed' ? 1 : 0);
    if (to.endsWith('7'))
      expect((await twinLog(twin.baseUrl, call.sid)).log[0]).toMatchObject({ speaker: 'callee', kind: 'greeting' });
  });

  it("gives up ringing after the call's Timeout", async () => {
    const call = await dial('+14155550330', '<Say>Hello.</Say>', { timeout: 3 });
    const callbacks = await allCallbacks(call);
    expect(callbacks.at(-1)!.params.CallStatus).toBe('no-answer');
  });
});

describe('TwiML', () => {
  it('is fetched signed, and obeyed: Say, Gather with speech (the persona answers to the action), Redirect, Dial, Hangup', async () => {
    const id = 'conversation';
    product.routes.set(`/${id}/start`, () =>
      twiml(
        `<Say voice="Polly.Joanna" language="en-US">Hi, this is Ana from Acme.</Say>` +
          `<Gather input="speech" hints="red, green, blue" speechTimeout="auto" action="/${id}/colour" language="en-US"><Say>Which colour do you like?</Say></Gather>` +
          `<Say>We did not hear you.</Say>`,
      ),
    );
    product.routes.set(`/${id}/colour`, () => twiml(`<Redirect method="POST">/${id}/transfer</Redirect>`));
    product.routes.set(`/${id}/transfer`, () =>
      twiml(`<Dial action="/${id}/after-dial" timeout="20">+14155550399</Dial><Say>Never said.</Say>`),
    );
    product.routes.set(`/${id}/after-dial`, () => twiml('<Say>Goodbye.</Say><Hangup/><Say>Never said either.</Say>'));
    const call = await twin.client.calls.create({
      to: '+14155550340',
      from: FROM,
      url: `${product.baseUrl}/${id}/start`,
    });
    const done = await ended(twin.client, call.sid);
    expect(done.status).toBe('completed');

    const requests = product.received.filter((request) => request.path.startsWith(`/${id}/`));
    expect(requests.map((request) => request.path)).toEqual([
      `/${id}/start`,
      `/${id}/colour`,
      `/${id}/transfer`,
      `/${id}/after-dial`,
    ]);
    expect(
      requests.every(
        (request) =>
          request.valid && request.params.CallSid === call.sid && request.params.CallStatus === 'in-progress',
      ),
    ).toBe(true);
    const expected = defaultAnswer('+14155550340', 'Which colour do you like?', ['red', 'green', 'blue']);
    expect(requests[1]!.params.SpeechResult).toBe(expected.speech);
    expect(Number(requests[1]!.params.Confidence)).toBeCloseTo(expected.confidence, 6);
    expect(expected.speech).toMatch(/red|green|blue/);
    // +14155550399 (last digit 9) is an invalid number.
    expect(requests[3]!.params).toMatchObject({ DialCallStatus: 'failed', DialCallDuration: '0' });
    expect(requests[3]!.params.DialCallSid).toMatch(/^CA[0-9a-f]{32}$/);

    const { log, durationSec } = await twinLog(twin.baseUrl, call.sid);
    expect(
      log
        .filter((entry) => entry.kind === 'say' || entry.kind === 'speech')
        .map((entry) => [entry.speaker, entry.text]),
    ).toEqual([
      ['agent', 'Hi, this is Ana from Acme.'],
      ['agent', 'Which colour do you like?'],
      ['callee', expected.speech],
      ['agent', 'Goodbye.'],
    ]);
    expect(log[0]).toMatchObject({ voice: 'Polly.Joanna', language: 'en-US' });
    expect(durationSec).toBe(Number(done.duration));
    expect(Number(done.duration)).toBeGreaterThan(5);
  });

  it('takes the answers a test scripted for the number, silence included (no action then: the next verb)', async () => {
    const to = '+14155550341';
    await scriptPersona(twin.baseUrl, { number: to, answers: [{ speech: 'Tuesday at ten', confidence: 0.77 }, null] });
    const id = 'scripted';
    product.routes.set(`/${id}/start`, () =>
      twiml(`<Gather input="speech" action="/${id}/day"><Say>Which day suits you?</Say></Gather>`),
    );
    product.routes.set(`/${id}/day`, () =>
      twiml(
        `<Gather input="speech" timeout="3" action="/${id}/never"><Say>Anything else?</Say></Gather><Say>Bye then.</Say>`,
      ),
    );
    const call = await twin.client.calls.create({ to, from: FROM, url: `${product.baseUrl}/${id}/start` });
    await ended(twin.client, call.sid);
    expect(product.at(`/${id}/day`)[0]!.params).toMatchObject({
      SpeechResult: 'Tuesday at ten',
      Confidence: '0.77000000',
    });
    expect(product.at(`/${id}/never`)).toHaveLength(0);
    const { log } = await twinLog(twin.baseUrl, call.sid);
    expect(log.map((entry) => entry.kind)).toEqual(['say', 'speech', 'say', 'silence', 'say']);
  });

  it('Connect holds the call as long as the callee talks, then it completes', async () => {
    const call = await dial('+14155550342', '<Connect><Stream url="wss://example.test/stream"/></Connect>');
    const done = await ended(twin.client, call.sid);
    // The number's talk time: 30 s plus 4 s for its second-to-last digit.
    expect(done.duration).toBe('34');
  });

  it('a document that cannot be fetched ends the call with error 11200 in the log', async () => {
    product.routes.set('/broken/twiml', () => ({ status: 500 }));
    const call = await twin.client.calls.create({
      to: '+14155550343',
      from: FROM,
      url: `${product.baseUrl}/broken/twiml`,
    });
    expect((await ended(twin.client, call.sid)).status).toBe('completed');
    expect((await twinLog(twin.baseUrl, call.sid)).log).toContainEqual(
      expect.objectContaining({ kind: 'error', code: 11200 }),
    );
  });

  it('a <Number url> (the whisper) is requested signed as the answered leg, said to it alone, then the two are bridged', async () => {
    const id = 'whisper';
    product.routes.set(`/${id}/whisper`, () => twiml('<Say>Transferred call. Ana wants red shoes.</Say>'));
    product.routes.set(`/${id}/after-dial`, () => twiml('<Hangup/>'));
    const call = await dial(
      '+14155550341',
      `<Dial action="/${id}/after-dial" timeout="20"><Number url="/${id}/whisper">+14155550302</Number></Dial>`,
    );
    await ended(twin.client, call.sid);
    const [whisper] = product.at(`/${id}/whisper`);
    expect(whisper).toMatchObject({ valid: true, method: 'POST' });
    expect(whisper!.params).toMatchObject({ ParentCallSid: call.sid, To: '+14155550302', Direction: 'outbound-dial' });
    const [after] = product.at(`/${id}/after-dial`);
    expect(after!.params).toMatchObject({ DialCallStatus: 'completed', DialCallSid: whisper!.params.CallSid });
    const { log } = await twinLog(twin.baseUrl, call.sid);
    const said = log.find((entry) => entry.kind === 'whisper')!;
    expect(said.text).toBe('Transferred call. Ana wants red shoes.');
    expect(log.find((entry) => entry.kind === 'bridge')!.atMs).toBeGreaterThan(said.atMs);
  });
});

describe('answering-machine detection', () => {
  it.each([
    ['+14155550350', 'Enable', 'human'],
    ['+14155550357', 'Enable', 'machine_start'],
    ['+14155550357', 'DetectMessageEnd', 'machine_end_beep'],
  ])('synchronous: %s with %s is answered by %s on the TwiML request', async (to, machineDetection, answeredBy) => {
    const call = await dial(to, '<Hangup/>', { machineDetection });
    const callbacks = await allCallbacks(call);
    expect(call.twimlRequests()[0]!.params.AnsweredBy).toBe(answeredBy);
    expect(callbacks.at(-1)!.params.AnsweredBy).toBe(answeredBy);
    expect((await twin.client.calls(call.sid).fetch()).answeredBy).toBe(answeredBy);
  });

  it('answers unknown past MachineDetectionTimeout, and what a test scripted (fax)', async () => {
    const slow = await dial('+14155550357', '<Hangup/>', {
      machineDetection: 'DetectMessageEnd',
      machineDetectionTimeout: 3,
    });
    await allCallbacks(slow);
    expect(slow.twimlRequests()[0]!.params.AnsweredBy).toBe('unknown');
    await scriptPersona(twin.baseUrl, { number: '+14155550351', answeredBy: 'fax' });
    const fax = await dial('+14155550351', '<Hangup/>', { machineDetection: 'Enable' });
    await allCallbacks(fax);
    expect(fax.twimlRequests()[0]!.params.AnsweredBy).toBe('fax');
  });

  it('asynchronous: the TwiML is fetched at once without AnsweredBy, and the result is POSTed, signed, to AsyncAmdStatusCallback', async () => {
    const call = await dial('+14155550357', '<Say>Hello, I am calling about your order.</Say><Pause length="20"/>', {
      machineDetection: 'DetectMessageEnd',
      asyncAmd: 'true',
      asyncAmdStatusCallback: `${product.baseUrl}/async-amd`,
    });
    await allCallbacks(call);
    expect(call.twimlRequests()[0]!.params.AnsweredBy).toBeUndefined();
    const amd = product.at('/async-amd').filter((request) => request.params.CallSid === call.sid);
    expect(amd).toHaveLength(1);
    expect(amd[0]!.valid).toBe(true);
    expect(amd[0]!.params).toMatchObject({
      AnsweredBy: 'machine_end_beep',
      AccountSid: 'ACdeadbeefdeadbeefdeadbeefdeadbeef',
    });
    expect(Number(amd[0]!.params.MachineDetectionDuration)).toBeGreaterThan(3_000);
  });
});

describe('updating a call', () => {
  it('Status=completed hangs up a call in progress; Status=canceled ends one still ringing', async () => {
    const talking = await dial('+14155550360', '<Say>Hello.</Say><Pause length="600"/>');
    await until(
      async () => (await twin.client.calls(talking.sid).fetch()).status,
      (status) => status === 'in-progress',
      10_000,
    );
    const hungUp = await twin.client.calls(talking.sid).update({ status: 'completed' });
    expect(hungUp.status).toBe('completed');
    expect(Number(hungUp.duration)).toBeLessThan(600);
    expect((await allCallbacks(talking)).at(-1)!.params.CallStatus).toBe('completed');

    // Twilio's longest ring Timeout, 600 s: the cancel comes while it rings however slow a loaded machine makes the test.
    const ringing = await dial('+14155550366', '<Say>Hello.</Say>', { timeout: 600 });
    const canceled = await twin.client.calls(ringing.sid).update({ status: 'canceled' });
    expect(canceled.status).toBe('canceled');
    expect((await allCallbacks(ringing)).at(-1)!.params.CallStatus).toBe('canceled');
    expect(ringing.twimlRequests()).toHaveLength(0);
  });

  it('Url redirects a call in progress to new TwiML; a call that ended cannot be redirected (21220)', async () => {
    const call = await dial('+14155550361', '<Pause length="600"/>');
    await until(
      async () => call.twimlRequests(),
      (requests) => requests.length === 1,
      10_000,
    );
    product.routes.set('/redirected', () => twiml('<Say>You were redirected.</Say>'));
    await twin.client.calls(call.sid).update({ url: `${product.baseUrl}/redirected`, method: 'POST' });
    const done = await ended(twin.client, call.sid);
    expect(done.status).toBe('completed');
    expect(product.at('/redirected').filter((request) => request.params.CallSid === call.sid)).toHaveLength(1);
    expect((await twinLog(twin.baseUrl, call.sid)).log.map((entry) => entry.text).filter(Boolean)).toContain(
      'You were redirected.',
    );
    await expect(twin.client.calls(call.sid).update({ twiml: twiml('<Say>Too late.</Say>') })).rejects.toMatchObject({
      status: 400,
      code: 21220,
    });
  });
});
