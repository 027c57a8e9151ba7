// The Twilio adapter's pure parts (docs/features/carriers/twilio.md): the signature check against the public URL,
// the mapping of Twilio's callbacks to the product's carrier events, the callback URLs and the TwiML seam. The whole path against the twin is in twilio-adapter.test.ts.
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import {
  answeredByEventOfTwilio,
  callEventOfTwilio,
  publicUrlOf,
  signedByTwilio,
  twilioStatusCallbackSchema,
} from '../../lib/carriers/twilio/twilio-callbacks';
import {
  answeredByOfTwilio,
  carrierStateOfTwilio,
  TWILIO_CALL_STATUSES,
} from '../../lib/carriers/twilio/twilio-states';
import { twilioCallbackUrl } from '../../lib/carriers/twilio/twilio-urls';
import {
  NO_ANSWER_TEXT,
  relayTwimlOfCall,
  twilioHints,
  twimlOfCall,
  VOICEMAIL_STEP,
} from '../../lib/carriers/twilio/twiml';
import { twilioSayVoiceOf } from '../../lib/carriers/twilio/twilio-voices';
import { VOICES } from '../../lib/voices/voices';
import { outcomeOfTerminalState } from '../../lib/calls/call-end';

describe('signedByTwilio', () => {
  // Twilio's documentation: https://www.twilio.com/docs/usage/security#validating-requests
  const published = {
    authToken: '12345',
    url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
    params: {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675309',
      Digits: '1234',
      From: '+14158675309',
      To: '+18005551212',
    },
    signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=',
  };

  it("accepts Twilio's published example, the URL made from a public base and the path as called", () => {
    const url = publicUrlOf('https://mycompany.com/', '/myapp.php?foo=1&bar=2');
    expect(url).toBe(published.url);
    expect(signedByTwilio(published.authToken, published.signature, url, published.params)).toBe(true);
  });

  it('refuses the example with another token, parameter, URL, or without a signature or a token', () => {
    const { authToken, url, params, signature } = published;
    expect(signedByTwilio('12346', signature, url, params)).toBe(false);
    expect(signedByTwilio(authToken, signature, url, { ...params, Digits: '4321' })).toBe(false);
    expect(signedByTwilio(authToken, signature, url.replace('foo=1', 'foo=2'), params)).toBe(false);
    expect(signedByTwilio(authToken, signature, 'http://127.0.0.1:3000/myapp.php?foo=1&bar=2', params)).toBe(false);
    expect(signedByTwilio(authToken, undefined, url, params)).toBe(false);
    expect(signedByTwilio(authToken, '', url, params)).toBe(false);
    // A connection made with an API key pair holds no auth token: nothing it receives can be verified.
    expect(signedByTwilio(null, signature, url, params)).toBe(false);
  });

  it("accepts what the SDK's own signing makes for a callback URL behind a proxy, and only at the public URL", () => {
    const authToken = 'f'.repeat(32);
    const attemptUrl = twilioCallbackUrl('https://calls.example.com/api', 'status', {
      connectionId: '6f1c2f0e-8a47-4bde-9d55-0d6a3c1b2e11',
      attemptId: 'lead-1:2',
    });
    expect(attemptUrl).toBe(
      'https://calls.example.com/api/telephony/twilio/6f1c2f0e-8a47-4bde-9d55-0d6a3c1b2e11/calls/lead-1%3A2/status',
    );
    const form = { CallSid: `CA${'a'.repeat(32)}`, CallStatus: 'ringing', SequenceNumber: '1' };
    const signature = twilio.getExpectedTwilioSignature(authToken, attemptUrl, form);
    // The proxy strips /api: the API sees only the path below it, and PUBLIC_BASE_URL gives the prefix back.
    const seen = attemptUrl.slice('https://calls.example.com/api'.length);
    expect(signedByTwilio(authToken, signature, publicUrlOf('https://calls.example.com/api', seen), form)).toBe(true);
    expect(signedByTwilio(authToken, signature, publicUrlOf('http://127.0.0.1:3000', seen), form)).toBe(false);
    // Twilio may sign the URL with its default port written out: the SDK's validator takes either.
    const withPort = twilio.getExpectedTwilioSignature(authToken, attemptUrl.replace('.com/', '.com:443/'), form);
    expect(signedByTwilio(authToken, withPort, attemptUrl, form)).toBe(true);
  });
});

describe("Twilio's callbacks as the product's carrier events", () => {
  const CallSid = `CA${'0123456789abcdef'.repeat(2)}`;

  it('maps every CallStatus to a carrier state, initiated to queued', () => {
    expect(Object.fromEntries(TWILIO_CALL_STATUSES.map((status) => [status, carrierStateOfTwilio(status)]))).toEqual({
      queued: 'queued',
      initiated: 'queued',
      ringing: 'ringing',
      'in-progress': 'in-progress',
      completed: 'completed',
      busy: 'busy',
      'no-answer': 'no-answer',
      failed: 'failed',
      canceled: 'canceled',
    });
  });

  it('maps AnsweredBy to human or machine, unknown (and anything new) to not known', () => {
    expect(
      Object.fromEntries(
        [
          'human',
          'machine_start',
          'machine_end_beep',
          'machine_end_silence',
          'machine_end_other',
          'fax',
          'unknown',
          'something_new',
        ].map((value) => [value, answeredByOfTwilio(value)]),
      ),
    ).toEqual({
      human: 'human',
      machine_start: 'machine',
      machine_end_beep: 'machine',
      machine_end_silence: 'machine',
      machine_end_other: 'machine',
      fax: 'machine',
      unknown: null,
      something_new: null,
    });
  });

  it('gives each callback the id CallSid:SequenceNumber, its time, its talk time and why it failed', () => {
    const completed = callEventOfTwilio(
      twilioStatusCallbackSchema.parse({
        CallSid,
        CallStatus: 'completed',
        SequenceNumber: '3',
        Timestamp: 'Fri, 27 Nov 2026 12:00:05 +0000',
        CallDuration: '42',
        AccountSid: `AC${'0'.repeat(32)}`,
        CallbackSource: 'call-progress-events',
      }),
      'lead:1',
    );
    expect(completed).toEqual({
      eventId: `${CallSid}:3`,
      providerCallId: CallSid,
      attemptId: 'lead:1',
      status: 'completed',
      answeredBy: null,
      durationMs: 42_000,
      reason: null,
      occurredAt: '2026-11-27T12:00:05.000Z',
    });
    const ringing = callEventOfTwilio(
      twilioStatusCallbackSchema.parse({ CallSid, CallStatus: 'ringing', SequenceNumber: '1', CallDuration: '0' }),
      'lead:1',
    );
    expect(ringing).toMatchObject({ eventId: `${CallSid}:1`, status: 'ringing', durationMs: null });
    const invalid = callEventOfTwilio(
      twilioStatusCallbackSchema.parse({ CallSid, CallStatus: 'failed', SequenceNumber: '2', SipResponseCode: '404' }),
      'lead:1',
    );
    expect(invalid.reason).toBe('invalid_number');
    expect(outcomeOfTerminalState(invalid.status, null, invalid.reason ?? null)).toBe('invalid_number');
    const failed = callEventOfTwilio(
      twilioStatusCallbackSchema.parse({ CallSid, CallStatus: 'failed', SequenceNumber: '2', SipResponseCode: '503' }),
      'lead:1',
    );
    expect(outcomeOfTerminalState(failed.status, null, failed.reason ?? null)).toBe('failed');
  });

  it('reads the outcome of each terminal CallStatus and AnsweredBy as the outcome table says', () => {
    const outcome = (status: (typeof TWILIO_CALL_STATUSES)[number], answeredBy: string | null) =>
      outcomeOfTerminalState(carrierStateOfTwilio(status), answeredByOfTwilio(answeredBy), null);
    expect(outcome('completed', 'human')).toBe('answered');
    expect(outcome('completed', 'machine_end_beep')).toBe('voicemail');
    expect(outcome('completed', 'fax')).toBe('voicemail');
    expect(outcome('completed', 'unknown')).toBe('answered');
    expect(outcome('busy', null)).toBe('busy');
    expect(outcome('no-answer', null)).toBe('no_answer');
    expect(outcome('failed', null)).toBe('failed');
    expect(outcome('canceled', null)).toBe('no_answer');
    expect(outcome('canceled', 'human')).toBe('answered');
    // The answer document never served (no step-0 turn; ANSWER_NEVER_SERVED_SQL): failed when nobody is known to
    // have answered, never when detection said who did, and only a completed call.
    const unserved = (status: (typeof TWILIO_CALL_STATUSES)[number], answeredBy: string | null) =>
      outcomeOfTerminalState(carrierStateOfTwilio(status), answeredByOfTwilio(answeredBy), null, false);
    expect(unserved('completed', 'unknown')).toBe('failed');
    expect(unserved('completed', null)).toBe('failed');
    expect(unserved('completed', 'human')).toBe('answered');
    expect(unserved('completed', 'machine_start')).toBe('voicemail');
    expect(unserved('canceled', null)).toBe('no_answer');
    expect(unserved('busy', null)).toBe('busy');
  });

  it('refuses a status callback without a CallSid of Twilio or with a CallStatus Twilio does not send', () => {
    expect(twilioStatusCallbackSchema.safeParse({ CallSid: 'sim_1', CallStatus: 'ringing' }).success).toBe(false);
    expect(twilioStatusCallbackSchema.safeParse({ CallSid, CallStatus: 'answered' }).success).toBe(false);
  });

  it('gives the detection result one id per call', () => {
    expect(answeredByEventOfTwilio({ CallSid, AnsweredBy: 'machine_end_silence' }, 'lead:1')).toMatchObject({
      eventId: `${CallSid}:amd`,
      answeredBy: 'machine',
    });
  });
});

describe('twimlOfCall, the seam of what the agent says: the script walk', () => {
  const URL = 'https://calls.example.com/telephony/twilio/c1/calls/a%3A1/twiml';
  const agent = {
    language: 'en-US',
    voiceId: 'espeak-ng/en-gb',
    script: {
      openingLine: 'Hi {{name}}, about <order> {{order}} & more',
      questions: ['Which colour, {{name}}?', 'How many?'],
      closing: 'Bye.',
    },
    voicemailMessage: 'Hello {{name}}, call us back about {{order}}.',
    hints: ['red', 'navy, blue', 'red', ' green '],
  };
  const call = { agent, lead: { name: 'Ana', fields: { order: 'A-7' } }, twimlUrl: URL };
  const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;
  const say = (text: string) => `<Say voice="Polly.Amy" language="en-GB">${text}</Say>`;
  const gather = (step: number, question: string) =>
    `<Gather input="speech" action="${URL}/${step}" method="POST" language="en-US" hints="red, navy blue, green" ` +
    `timeout="6" speechTimeout="auto" actionOnEmptyResult="true">${say(question)}</Gather>`;

  it('answers with the opening line, escaped, then the first question in a speech Gather whose action is step 1', () => {
    expect(twimlOfCall(call)).toEqual({
      twiml: xml(say('Hi Ana, about &lt;order&gt; A-7 &amp; more') + gather(1, 'Which colour, Ana?')),
      turns: [
        { step: 0, part: 1, speaker: 'agent', text: 'Hi Ana, about <order> A-7 & more', confidence: null },
        { step: 0, part: 2, speaker: 'agent', text: 'Which colour, Ana?', confidence: null },
      ],
    });
  });

  it("stores the lead's answer of step n, asks question n + 1, and after the last one closes and hangs up", () => {
    expect(twimlOfCall(call, { kind: 'step', step: 1, heard: { text: 'Navy blue.', confidence: 0.91 } })).toEqual({
      twiml: xml(gather(2, 'How many?')),
      turns: [
        { step: 1, part: 0, speaker: 'lead', text: 'Navy blue.', confidence: 0.91 },
        { step: 1, part: 2, speaker: 'agent', text: 'How many?', confidence: null },
      ],
    });
    expect(twimlOfCall(call, { kind: 'step', step: 2, heard: { text: 'Two.', confidence: 0.8 } })).toEqual({
      twiml: xml(`${say('Bye.')}<Hangup/>`),
      turns: [
        { step: 2, part: 0, speaker: 'lead', text: 'Two.', confidence: 0.8 },
        { step: 2, part: 2, speaker: 'agent', text: 'Bye.', confidence: null },
      ],
    });
  });

  it('says (no answer) for a Gather that heard nothing, and goes on', () => {
    const { turns, twiml } = twimlOfCall(call, { kind: 'step', step: 1, heard: null });
    expect(turns[0]).toEqual({ step: 1, part: 0, speaker: 'lead', text: NO_ANSWER_TEXT, confidence: null });
    expect(twiml).toBe(xml(gather(2, 'How many?')));
    expect(twimlOfCall(call, { kind: 'step', step: 1, heard: { text: '  ', confidence: 0.2 } }).turns[0]!.text).toBe(
      NO_ANSWER_TEXT,
    );
  });

  it('leaves the voicemail message with the lead filled, then hangs up; without a message it hangs up', () => {
    expect(twimlOfCall(call, { kind: 'voicemail' })).toEqual({
      twiml: xml(`${say('Hello Ana, call us back about A-7.')}<Hangup/>`),
      turns: [
        {
          step: VOICEMAIL_STEP,
          part: 1,
          speaker: 'agent',
          text: 'Hello Ana, call us back about A-7.',
          confidence: null,
        },
      ],
    });
    expect(twimlOfCall({ ...call, agent: { ...agent, voicemailMessage: null } }, { kind: 'voicemail' })).toEqual({
      twiml: xml('<Hangup/>'),
      turns: [],
    });
  });

  it("maps every catalogue voice to a Twilio voice of the voice's language; an unknown voice speaks Twilio's default in the agent's language", () => {
    for (const voice of VOICES) {
      const mapped = twilioSayVoiceOf(voice.id, 'en-US');
      expect(mapped.voice, voice.id).toMatch(/^(Polly|Google)\.[A-Za-z-]+$/);
      expect(mapped.language, voice.id).toBe(voice.language);
    }
    const { twiml } = twimlOfCall({ ...call, agent: { ...agent, voiceId: 'v1', language: 'de-DE' } });
    expect(twiml).toContain('<Say language="de-DE">Hi Ana');
  });

  it("says the dictionaries' pronunciations as SSML <sub> with a Polly voice, as text with Twilio's default; listens for the written form", () => {
    const said = { ...agent, hints: ['Ana => Anna', 'A-7 => ay seven', 'red'] };
    const { twiml, turns } = twimlOfCall({ ...call, agent: said });
    expect(twiml).toContain(
      say('Hi <sub alias="Anna">Ana</sub>, about &lt;order&gt; <sub alias="ay seven">A-7</sub> &amp; more'),
    );
    expect(twiml).toContain('hints="Ana, A-7, red"');
    expect(turns[0]!.text).toBe('Hi Ana, about <order> A-7 & more'); // the transcript keeps what the agent wrote
    const plain = twimlOfCall({ ...call, agent: { ...said, voiceId: 'v1' } }).twiml;
    expect(plain).toContain('<Say language="en-US">Hi Anna, about &lt;order&gt; ay seven &amp; more</Say>');
    const relay = relayTwimlOfCall(
      { ...call, agent: said },
      { relayUrl: 'wss://relay.example.com', attemptId: 'a:1', welcomeGreeting: 'Hi Ana.', endedUrl: URL },
    );
    expect(relay).toContain('welcomeGreeting="Hi Anna."');
  });

  it('keeps at most 500 hints', () => {
    expect(twilioHints(Array.from({ length: 600 }, (_, index) => `term ${index}`)).split(', ')).toHaveLength(500);
  });

  it('hangs up at once on a call without an agent', () => {
    expect(twimlOfCall({ agent: null, lead: { name: null, fields: {} } })).toEqual({
      twiml: '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
      turns: [],
    });
  });
});
