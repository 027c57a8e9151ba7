import { timeUpLine } from '../conversation/time-up';
import type { ScriptStep, ScriptTurn } from '../conversation/script-walk';

/**
 * A test call walked without the relay (the script walk, docs/features/test-calls.md#length) within the minutes its
 * credit hold covers: each step is judged, when the carrier asks for it, by the paid time left, so the lead hears the
 * time-up line (lib/conversation/time-up.ts) and the call is hung up before the carrier's own time limit cuts it
 * mid-sentence. The carrier's limit stays the backstop. Pure: the routes read the time left (api/carriers/script-calls.ts
 * paidTimeLeftMs).
 */

/** A word of the agent's, as long as it takes to say at 150 words a minute (the relay socket's reckoning). */
export const SPOKEN_WORD_MS = 400;

/** How long the agent takes to say `text`. */
export const spokenMs = (text: string) => text.split(/\s+/).filter(Boolean).length * SPOKEN_WORD_MS;

/**
 * Kept back at the end of the paid time by every step that goes on: the time-up line (ten words, 4 s), the lateness of
 * the first request after the answer the carrier counts the limit from, and an answer that runs past its wait. A step
 * whose words (and its question's shortest wait) do not fit in the time left less this is replaced by the time-up line.
 */
export const TIME_UP_MARGIN_MS = 10_000;

/** The shortest wait for the lead to begin answering a question that is still asked: less, and the time is up. */
export const MIN_ANSWER_WAIT_SECONDS = 2;

export interface PaidStep extends ScriptStep {
  /** How long the question waits for the lead to begin answering (s): the usual wait, or less when time is short. */
  answerWaitSec: number;
  /** The step was replaced by the time-up line, then the hang-up. */
  timeUp: boolean;
}

/**
 * The step as the paid time left allows (`leftMs`: the call's time, null for a call without a paid limit):
 * - it fits (its lines and question said, then at least MIN_ANSWER_WAIT_SECONDS of wait, within the time left less
 *   TIME_UP_MARGIN_MS): unchanged, its question's wait clipped to the time that is left (`clipWait`; otherwise the
 *   whole `answerWaitSec` must fit, as on Telnyx, whose wait is armed later by the question sweep);
 * - otherwise: the lead's answer that reached the step is kept, and the agent says the time-up line in the agent's
 *   `language` instead, then the call is hung up (question null).
 * A step that says nothing (no agent) is left as it is.
 */
export function stepWithinPaidTime(
  step: ScriptStep,
  options: { leftMs: number | null; language: string; answerWaitSec: number; clipWait: boolean },
): PaidStep {
  const { leftMs, answerWaitSec } = options;
  if (leftMs === null || (step.lines.length === 0 && step.question === null))
    return { ...step, answerWaitSec, timeUp: false };
  const spoken = [...step.lines, step.question ?? ''].reduce((sum, text) => sum + spokenMs(text), 0);
  const waitLeftMs = leftMs - TIME_UP_MARGIN_MS - spoken;
  if (
    step.question === null
      ? waitLeftMs >= 0
      : waitLeftMs >= (options.clipWait ? MIN_ANSWER_WAIT_SECONDS : answerWaitSec) * 1_000
  )
    return {
      ...step,
      answerWaitSec: step.question === null ? answerWaitSec : Math.min(answerWaitSec, Math.floor(waitLeftMs / 1_000)),
      timeUp: false,
    };
  const line = timeUpLine(options.language);
  const heard = step.turns.filter((turn) => turn.speaker === 'lead');
  // Numbered as the walk numbers an agent's line (lib/conversation/script-walk.ts): after the turns before it.
  const said: ScriptTurn = { step: step.step, part: heard.length + 1, speaker: 'agent', text: line, confidence: null };
  return { step: step.step, turns: [...heard, said], lines: [line], question: null, answerWaitSec, timeUp: true };
}
