// The script walk within a test call's paid time (lib/carriers/paid-time.ts, docs/features/test-calls.md#length): the
// pure judgement of a step by the time left, and the TwiML it makes. The carriers' twins walk it end to end in
// test/test-calls/test-call-walk-time-up.test.ts.
import { describe, expect, it } from 'vitest';
import { MIN_ANSWER_WAIT_SECONDS, spokenMs, stepWithinPaidTime, TIME_UP_MARGIN_MS } from '../../lib/carriers/paid-time';
import { scriptStepOf, type ScriptCall } from '../../lib/conversation/script-walk';
import { twimlOfCall } from '../../lib/carriers/twilio/twiml';

const TIME_UP_EN = "I'm sorry, the time for this test is up. Goodbye.";
const TIME_UP_ES = 'Lo siento, el tiempo de esta prueba se ha agotado. Adiós.';

// Question 1: five words (2 s); the closing two (0.8 s).
const call: ScriptCall = {
  agent: {
    language: 'en-US',
    voiceId: 'espeak-ng/en-gb',
    script: { openingLine: 'Hi.', questions: ['Which colour would you like?', 'How many?'], closing: 'Bye now.' },
  },
  lead: { name: 'Ana', fields: {} },
};
const answered = { kind: 'step' as const, step: 1, heard: { text: 'Navy.', confidence: 0.9 } };
const judged = (leftMs: number | null, clipWait = true, language = 'en') =>
  stepWithinPaidTime(scriptStepOf(call, answered), { leftMs, language, answerWaitSec: 6, clipWait });

describe('stepWithinPaidTime', () => {
  it('leaves a step as it is when the call has no paid limit, or when its words and the whole wait fit', () => {
    const step = scriptStepOf(call, answered);
    expect(judged(null)).toEqual({ ...step, answerWaitSec: 6, timeUp: false });
    expect(judged(TIME_UP_MARGIN_MS + spokenMs('How many?') + 6_000)).toEqual({
      ...step,
      answerWaitSec: 6,
      timeUp: false,
    });
  });

  it("clips the question's wait to the time left on Twilio, down to the shortest wait", () => {
    const asked = TIME_UP_MARGIN_MS + spokenMs('How many?');
    expect(judged(asked + 3_500)).toMatchObject({ question: 'How many?', answerWaitSec: 3, timeUp: false });
    expect(judged(asked + MIN_ANSWER_WAIT_SECONDS * 1_000)).toMatchObject({
      answerWaitSec: MIN_ANSWER_WAIT_SECONDS,
      timeUp: false,
    });
  });

  it("says the time-up line instead of a step that does not fit, keeping the lead's answer, then hangs up", () => {
    const asked = TIME_UP_MARGIN_MS + spokenMs('How many?');
    expect(judged(asked + MIN_ANSWER_WAIT_SECONDS * 1_000 - 1)).toEqual({
      step: 1,
      turns: [
        { step: 1, part: 0, speaker: 'lead', text: 'Navy.', confidence: 0.9 },
        { step: 1, part: 2, speaker: 'agent', text: TIME_UP_EN, confidence: null },
      ],
      lines: [TIME_UP_EN],
      question: null,
      answerWaitSec: 6,
      timeUp: true,
    });
    // Past the limit already (a late request): still the line, in the agent's language.
    expect(judged(-5_000, true, 'es-MX')).toMatchObject({ lines: [TIME_UP_ES], question: null, timeUp: true });
  });

  it("needs the whole wait when it cannot be clipped (Telnyx's, armed later by the question sweep)", () => {
    const asked = TIME_UP_MARGIN_MS + spokenMs('How many?');
    expect(judged(asked + 5_999, false)).toMatchObject({ timeUp: true });
    expect(judged(asked + 6_000, false)).toMatchObject({ question: 'How many?', answerWaitSec: 6, timeUp: false });
  });

  it('lets the closing be said when it fits, the time-up line otherwise', () => {
    const last = { kind: 'step' as const, step: 2, heard: null };
    const closing = (leftMs: number) =>
      stepWithinPaidTime(scriptStepOf(call, last), { leftMs, language: 'en', answerWaitSec: 6, clipWait: true });
    expect(closing(TIME_UP_MARGIN_MS + spokenMs('Bye now.'))).toMatchObject({ lines: ['Bye now.'], timeUp: false });
    expect(closing(TIME_UP_MARGIN_MS + spokenMs('Bye now.') - 1)).toMatchObject({ lines: [TIME_UP_EN], timeUp: true });
  });
});

describe('twimlOfCall with the paid time left', () => {
  const say = (text: string) => `<Say voice="Polly.Amy" language="en-GB">${text}</Say>`;

  it('answers <Say> of the time-up line and <Hangup/> for a step that does not fit', () => {
    expect(twimlOfCall(call, answered, 1_000).twiml).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response>${say('I&apos;m sorry, the time for this test is up. Goodbye.')}<Hangup/></Response>`,
    );
  });

  it("clips the Gather's timeout, and leaves the voicemail step alone", () => {
    const left = TIME_UP_MARGIN_MS + spokenMs('How many?') + 4_200;
    expect(twimlOfCall(call, answered, left).twiml).toContain('timeout="4"');
    expect(twimlOfCall(call, answered, null).twiml).toContain('timeout="6"');
    const voicemail = { ...call, agent: { ...call.agent!, voicemailMessage: 'Call us back.' } };
    expect(twimlOfCall(voicemail, { kind: 'voicemail' }, 0).twiml).toContain(say('Call us back.'));
  });
});
