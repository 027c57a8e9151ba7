// The Twilio adapter's pure parts (docs/features/carriers.md#twilio): the signature check against the public URL,
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
import { twimlOfCall } from '../../lib/carriers/twilio/twiml';
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

describe('twimlOfCall, the seam of what the agent says', () => {
  it("says the agent's opening line and closing with the lead's fields, escaped, then hangs up", () => {
    expect(
      twimlOfCall({
        agent: {
          language: 'en-US',
          voiceId: 'v1',
          script: { openingLine: 'Hi {{name}}, about <order> {{order}} & more', questions: ['Q?'], closing: 'Bye.' },
        },
        lead: { name: 'Ana', fields: { order: 'A-7' } },
      }),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say language="en-US">Hi Ana, about &lt;order&gt; A-7 &amp; more</Say>' +
        '<Say language="en-US">Bye.</Say><Hangup/></Response>',
    );
  });

  it('hangs up at once on a call without an agent', () => {
    expect(twimlOfCall({ agent: null, lead: { name: null, fields: {} } })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
    );
  });
});
