import type { CallState } from './protocol';

/**
 * What the number does, in the simulator's own words: the twins (simulators/twilio-twin/plan.ts,
 * simulators/telnyx-twin/) read these rules too, so they name nothing of the product's.
 */
export type SimulatedOutcome = 'answered' | 'busy' | 'no_answer' | 'voicemail' | 'failed' | 'invalid_number';

/** A call's states as the simulated carrier reports them (its protocol, protocol.ts). */
export type SimulatedCallStatus = CallState;

/**
 * What the simulated carrier does with a number: a pure function of its digits, so tests and demos can
 * script every path of the dial ladder (docs/features/calls.md#the-simulated-carrier). The last digit decides:
 *   0-4 answered by a human, 5 busy, 6 no answer, 7 answered by a machine (voicemail), 8 failed,
 *   9 invalid number.
 * An answered call (human or machine) talks 30 s plus 1 s per unit of the second-to-last digit.
 * The times below are real (simulated) time; the carrier multiplies them by its time scale.
 */
export const SIMULATED_TIMES = {
  /** queued -> ringing. */
  queuedMs: 1_000,
  /** Ringing before a human or a machine picks up. */
  answerAfterMs: 5_000,
  /** Ringing before the line is found busy. */
  busyAfterMs: 2_000,
  /** Ringing before the carrier gives up: its ring timeout. */
  ringTimeoutMs: 30_000,
  /** A failed call (carrier error, or a number that does not exist) fails this long after the dial. */
  failAfterMs: 500,
  talkBaseMs: 30_000,
  talkPerUnitMs: 1_000,
} as const;

const OUTCOME_BY_LAST_DIGIT: readonly SimulatedOutcome[] = [
  'answered',
  'answered',
  'answered',
  'answered',
  'answered',
  'busy',
  'no_answer',
  'voicemail',
  'failed',
  'invalid_number',
];

export function simulatedOutcomeFor(phone: string): SimulatedOutcome {
  const lastDigit = Number(phone.replace(/\D/g, '').at(-1) ?? 0);
  return OUTCOME_BY_LAST_DIGIT[lastDigit]!;
}

/** Talk time of an answered call to this number. */
export function simulatedTalkMs(phone: string): number {
  const tens = Number(phone.replace(/\D/g, '').at(-2) ?? 0);
  return SIMULATED_TIMES.talkBaseMs + tens * SIMULATED_TIMES.talkPerUnitMs;
}

export interface TimelineEvent {
  status: SimulatedCallStatus;
  /** Real (simulated) milliseconds after the dial. */
  atMs: number;
  answeredBy: 'human' | 'machine' | null;
  durationMs: number | null;
  reason: string | null;
}

/**
 * The call's events, in order, from the dial. A hangup (hangupAtMs after the dial) that comes before the
 * call's natural end replaces what was still to come by one `canceled` event at that moment.
 */
export function simulatedTimeline(to: string, hangupAtMs: number | null = null): TimelineEvent[] {
  const outcome = simulatedOutcomeFor(to);
  const { queuedMs, answerAfterMs, busyAfterMs, ringTimeoutMs, failAfterMs } = SIMULATED_TIMES;
  const event = (status: SimulatedCallStatus, atMs: number, extra: Partial<TimelineEvent> = {}): TimelineEvent => ({
    status,
    atMs,
    answeredBy: null,
    durationMs: null,
    reason: null,
    ...extra,
  });
  const queued = event('queued', 0);
  let natural: TimelineEvent[];
  if (outcome === 'failed' || outcome === 'invalid_number') {
    natural = [
      queued,
      event('failed', failAfterMs, { reason: outcome === 'invalid_number' ? 'invalid_number' : 'carrier_error' }),
    ];
  } else if (outcome === 'busy') {
    natural = [queued, event('ringing', queuedMs), event('busy', queuedMs + busyAfterMs)];
  } else if (outcome === 'no_answer') {
    natural = [queued, event('ringing', queuedMs), event('no-answer', queuedMs + ringTimeoutMs)];
  } else {
    const answeredBy = outcome === 'voicemail' ? 'machine' : 'human';
    const answerAt = queuedMs + answerAfterMs;
    const talkMs = simulatedTalkMs(to);
    natural = [
      queued,
      event('ringing', queuedMs),
      event('in-progress', answerAt, { answeredBy }),
      event('completed', answerAt + talkMs, { answeredBy, durationMs: talkMs }),
    ];
  }
  const end = natural.at(-1)!;
  if (hangupAtMs === null || hangupAtMs >= end.atMs) return natural;
  const before = natural.filter((step) => step.atMs <= hangupAtMs);
  const answered = before.find((step) => step.status === 'in-progress');
  return [
    ...before,
    event('canceled', hangupAtMs, {
      answeredBy: answered?.answeredBy ?? null,
      durationMs: answered ? hangupAtMs - answered.atMs : null,
      reason: 'hangup',
    }),
  ];
}
