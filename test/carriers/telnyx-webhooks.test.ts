// The Telnyx adapter's pure parts (docs/features/carriers/telnyx.md): the mapping of Call Control's webhooks to the
// product's carrier events and outcomes, client_state, and a script step as speak commands. The whole path against
// the twin is in telnyx-adapter.test.ts.
import { describe, expect, it } from 'vitest';
import { outcomeOfTerminalState } from '../../lib/calls/call-end';
import { scriptStepOf, VOICEMAIL_STEP } from '../../lib/conversation/script-walk';
import { decodeClientState, encodeClientState, telnyxSpeaksOf } from '../../lib/carriers/telnyx/telnyx-script';
import { answeredByOfTelnyx, endOfTelnyxHangup, TELNYX_HANGUP_CAUSES } from '../../lib/carriers/telnyx/telnyx-states';
import {
  answeredByEventOfTelnyx,
  callEventOfTelnyx,
  telnyxWebhookSchema,
} from '../../lib/carriers/telnyx/telnyx-webhooks';
import { telnyxSpeakVoiceOf } from '../../lib/carriers/telnyx/telnyx-voices';

const webhook = (event_type: string, payload: Record<string, unknown> = {}, occurred_at = '2026-11-27T12:00:40.000Z') =>
  telnyxWebhookSchema.parse({
    data: {
      event_type,
      id: 'e1',
      occurred_at,
      payload: { call_control_id: 'v3:abc', ...payload },
      record_type: 'event',
    },
  });

describe("Call Control's hang-up causes as the product's outcomes", () => {
  const outcome = (cause: string, answeredBy: 'human' | 'machine' | null, sip?: string) => {
    const { status, reason } = endOfTelnyxHangup(cause, sip);
    return outcomeOfTerminalState(status, answeredBy, reason);
  };

  it('maps every cause of the description to the outcome of the table', () => {
    expect(Object.fromEntries(TELNYX_HANGUP_CAUSES.map((cause) => [cause, outcome(cause, null, '503')]))).toEqual({
      call_rejected: 'busy',
      normal_clearing: 'answered',
      originator_cancel: 'no_answer',
      timeout: 'no_answer',
      time_limit: 'answered',
      user_busy: 'busy',
      not_found: 'invalid_number',
      no_answer: 'no_answer',
      unspecified: 'failed',
    });
    expect(outcome('normal_clearing', 'machine')).toBe('voicemail');
    expect(outcome('originator_cancel', 'human')).toBe('answered');
    expect(outcome('unallocated_number', null)).toBe('invalid_number');
    expect(outcome('invalid_number_format', null)).toBe('invalid_number');
    // A cause Telnyx adds later: failed, or invalid_number when the SIP code says the number does not exist.
    expect(outcome('something_new', null, '404')).toBe('invalid_number');
    expect(outcome('unspecified', null, '484')).toBe('invalid_number');
    expect(outcome('something_new', null, '500')).toBe('failed');
  });

  it('maps detection results to who answered: human_*, machine and fax, not_sure and silence unknown', () => {
    expect(
      ['human', 'human_residence', 'human_business', 'machine', 'fax_detected', 'not_sure', 'silence', 'new'].map(
        answeredByOfTelnyx,
      ),
    ).toEqual(['human', 'human', 'human', 'machine', 'machine', null, null, null]);
  });

  it('gives each progress webhook the id call_control_id:event_type, its time, and the end its talk time from the answer', () => {
    expect(callEventOfTelnyx(webhook('call.initiated'), 'lead:1')).toEqual({
      eventId: 'v3:abc:call.initiated',
      providerCallId: 'v3:abc',
      attemptId: 'lead:1',
      status: 'queued',
      occurredAt: '2026-11-27T12:00:40.000Z',
    });
    expect(callEventOfTelnyx(webhook('call.answered'), 'lead:1')).toMatchObject({ status: 'in-progress' });
    const end = callEventOfTelnyx(
      webhook('call.hangup', { hangup_cause: 'normal_clearing', sip_hangup_cause: '200' }),
      'lead:1',
      new Date('2026-11-27T12:00:10.000Z'),
    );
    expect(end).toMatchObject({ eventId: 'v3:abc:call.hangup', status: 'completed', durationMs: 30_000, reason: null });
    expect(
      callEventOfTelnyx(webhook('call.hangup', { hangup_cause: 'not_found', sip_hangup_cause: '404' }), 'lead:1'),
    ).toMatchObject({ status: 'failed', reason: 'invalid_number', durationMs: null });
    expect(callEventOfTelnyx(webhook('call.speak.ended'), 'lead:1')).toBeNull();
  });

  it('records detection once per call, and a greeting end as a machine', () => {
    expect(answeredByEventOfTelnyx(webhook('call.machine.detection.ended', { result: 'human' }), 'l:1')).toMatchObject({
      eventId: 'v3:abc:amd',
      answeredBy: 'human',
    });
    expect(answeredByEventOfTelnyx(webhook('call.machine.greeting.ended', { result: 'ended' }), 'l:1')).toMatchObject({
      eventId: 'v3:abc:greeting',
      answeredBy: 'machine',
    });
  });
});

describe('client_state', () => {
  it("is base64 of the attempt id at the dial, and of the attempt and step on the walk's commands", () => {
    expect(encodeClientState({ attemptId: 'lead:1' })).toBe(Buffer.from('lead:1').toString('base64'));
    expect(decodeClientState(encodeClientState({ attemptId: 'lead:1' }))).toEqual({ attemptId: 'lead:1' });
    expect(decodeClientState(encodeClientState({ attemptId: 'lead:1', step: 2 }))).toEqual({
      attemptId: 'lead:1',
      step: 2,
    });
    expect(decodeClientState(encodeClientState({ attemptId: 'lead:1', step: 'end' }))).toEqual({
      attemptId: 'lead:1',
      step: 'end',
    });
    expect(decodeClientState(undefined)).toBeNull();
    // Not the product's JSON: read as it is.
    expect(decodeClientState(Buffer.from('{"x":1}').toString('base64'))).toEqual({ attemptId: '{"x":1}' });
  });
});

describe('a script step as speak commands', () => {
  const agent = {
    language: 'en-US',
    voiceId: 'espeak-ng/en-gb',
    script: { openingLine: 'Hi {{name}}.', questions: ['Which colour?', 'How many?'], closing: 'Bye.' },
    voicemailMessage: 'Call us back, {{name}}.',
  };
  const call = { agent, lead: { name: 'Ana', fields: {} } };
  const state = (step: number | 'end') => encodeClientState({ attemptId: 'a:1', step });
  const voice = { voice: 'AWS.Polly.Amy-Neural', language: 'en-GB' };

  it('says the opening then asks question 1, whose transcription is step 1', () => {
    expect(telnyxSpeaksOf(call, 'a:1', scriptStepOf(call, { kind: 'answer' }))).toEqual({
      speaks: [
        { payload: 'Hi Ana.', ...voice, commandId: 'speak:0:0' },
        { payload: 'Which colour?', ...voice, commandId: 'speak:0:1', clientState: state(1) },
      ],
      hangUpNow: false,
    });
  });

  it('after the last answer says the closing marked end (its end hangs up)', () => {
    const step = scriptStepOf(call, { kind: 'step', step: 2, heard: { text: 'Two.', confidence: 0.9 } });
    expect(step.turns[0]).toEqual({ step: 2, part: 0, speaker: 'lead', text: 'Two.', confidence: 0.9 });
    expect(telnyxSpeaksOf(call, 'a:1', step)).toEqual({
      speaks: [{ payload: 'Bye.', ...voice, commandId: 'speak:2:0', clientState: state('end') }],
      hangUpNow: false,
    });
  });

  it('leaves the voicemail message marked end, or hangs up at once without one or without an agent', () => {
    const step = scriptStepOf(call, { kind: 'voicemail' });
    expect(step.turns.map((turn) => [turn.step, turn.text])).toEqual([[VOICEMAIL_STEP, 'Call us back, Ana.']]);
    expect(telnyxSpeaksOf(call, 'a:1', step).speaks).toEqual([
      { payload: 'Call us back, Ana.', ...voice, commandId: `speak:${VOICEMAIL_STEP}:0`, clientState: state('end') },
    ]);
    const silent = { ...call, agent: { ...agent, voicemailMessage: null } };
    expect(telnyxSpeaksOf(silent, 'a:1', scriptStepOf(silent, { kind: 'voicemail' }))).toEqual({
      speaks: [],
      hangUpNow: true,
    });
    const none = { agent: null, lead: call.lead };
    expect(telnyxSpeaksOf(none, 'a:1', scriptStepOf(none, { kind: 'answer' }))).toEqual({
      speaks: [],
      hangUpNow: true,
    });
  });

  it("speaks Telnyx's default voice in the agent's language for a voice the table does not know", () => {
    expect(telnyxSpeakVoiceOf('v1', 'de-DE')).toEqual({ voice: 'female', language: 'de-DE' });
  });
});
