import { SIMULATED_TIMES, simulatedOutcomeFor, simulatedTalkMs } from '../simulated-carrier/timeline';

/**
 * What a number does when the twin dials it, and how long things take: the simulated carrier's rules by the number's
 * last digit (simulators/simulated-carrier/timeline.ts: 0-4 a human, 5 busy, 6 no answer, 7 a machine, 8 failed, 9 invalid),
 * read through Twilio's own ring Timeout. Every time here is simulated time, in ms from the dial; the twin multiplies
 * them by its time scale. Pure functions: the same number always does the same thing.
 */
export const TWIN_TIMES = {
  /** Twilio's speech rate as the twin estimates it: 150 words a minute. */
  wordMs: 400,
  /** A <Play> (the twin fetches no audio): 5 s a loop. */
  playMs: 5_000,
  /** The person starts answering a <Gather> this long after its prompt ends. */
  answerDelayMs: 600,
  /** speechTimeout="auto": the silence after the answer that ends the Gather. */
  autoSpeechTimeoutMs: 1_000,
  /** Answering-machine detection: a human's short greeting then silence. */
  humanDetectedMs: 2_500,
  /** A machine's greeting runs past Twilio's speech threshold (MachineDetectionSpeechThreshold, 2.4 s). */
  machineStartMs: 3_000,
  /** The beep after a machine's greeting. */
  beepMs: 500,
  /** A fax tone is recognised at once. */
  faxMs: 1_500,
  /** machine_end_silence: the greeting ends without a beep, then this silence. */
  endSilenceMs: 5_000,
} as const;

/**
 * Twilio's AnsweredBy values, as its answering-machine detection page lists them
 * (https://www.twilio.com/docs/voice/answering-machine-detection): the twin's own list, not the adapter's, so that an
 * adapter that misreads one is caught by the twin sending it.
 */
export const ANSWERED_BY = [
  'human',
  'machine_start',
  'machine_end_beep',
  'machine_end_silence',
  'machine_end_other',
  'fax',
  'unknown',
] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

export type TerminalStatus = 'completed' | 'busy' | 'no-answer' | 'failed' | 'canceled';

export interface DialPlan {
  /** When the number starts ringing; null when it fails first. */
  ringingAtMs: number | null;
  /** When it is picked up, and by whom; null when it is not. */
  answer: { atMs: number; by: 'human' | 'machine' } | null;
  /** How an unanswered call ends: status, when, and the SIP response Twilio reports. */
  end: { atMs: number; status: TerminalStatus; sipResponseCode: number } | null;
}

/** The dial of `to` with Twilio's ring Timeout (seconds): ringing, then picked up or not. */
export function dialPlan(to: string, ringTimeoutSec: number): DialPlan {
  const { queuedMs, answerAfterMs, busyAfterMs, failAfterMs } = SIMULATED_TIMES;
  const outcome = simulatedOutcomeFor(to);
  const giveUpAtMs = queuedMs + ringTimeoutSec * 1_000;
  if (outcome === 'failed' || outcome === 'invalid_number')
    return {
      ringingAtMs: null,
      answer: null,
      end: { atMs: failAfterMs, status: 'failed', sipResponseCode: outcome === 'invalid_number' ? 404 : 503 },
    };
  if (outcome === 'busy')
    return {
      ringingAtMs: queuedMs,
      answer: null,
      end: { atMs: queuedMs + busyAfterMs, status: 'busy', sipResponseCode: 486 },
    };
  const answerAtMs = queuedMs + answerAfterMs;
  if (outcome === 'no_answer' || answerAtMs > giveUpAtMs)
    return {
      ringingAtMs: queuedMs,
      answer: null,
      end: { atMs: giveUpAtMs, status: 'no-answer', sipResponseCode: 487 },
    };
  return {
    ringingAtMs: queuedMs,
    answer: { atMs: answerAtMs, by: outcome === 'voicemail' ? 'machine' : 'human' },
    end: null,
  };
}

/** A <Dial>ed number's leg: its DialCallStatus, how long it took, and how long it talked. */
export function dialedLeg(
  number: string,
  timeoutSec: number,
): { status: 'completed' | 'busy' | 'no-answer' | 'failed'; tookMs: number; talkSec: number } {
  const plan = dialPlan(number, timeoutSec);
  if (!plan.answer) {
    const end = plan.end!;
    return { status: end.status as 'busy' | 'no-answer' | 'failed', tookMs: end.atMs, talkSec: 0 };
  }
  const talkMs = simulatedTalkMs(number);
  return { status: 'completed', tookMs: plan.answer.atMs + talkMs, talkSec: Math.round(talkMs / 1_000) };
}

/** How long a caller talks to a <Connect>ed stream: as long as the number's answered call lasts. */
export const connectedTalkMs = (to: string) => simulatedTalkMs(to);

/** The speaking time of a text: its words at 150 a minute (at least one word's time). */
export const speakingMs = (text: string) => Math.max(1, text.split(/\s+/).filter(Boolean).length) * TWIN_TIMES.wordMs;

/** What a machine (last digit 7) says when it picks up. */
export const machineGreeting = (to: string) =>
  `Hi, you have reached ${to.replace(/\D/g, '').split('').join(' ')}. I can't take your call right now. Please leave a message after the tone.`;

/**
 * Answering-machine detection of a picked-up call: Twilio's AnsweredBy and MachineDetectionDuration. `Enable` answers
 * as soon as it knows (a machine: machine_start); `DetectMessageEnd` waits for a machine's greeting to end (beep:
 * machine_end_beep). Past MachineDetectionTimeout it answers `unknown` at the timeout. `scripted` (test control) makes
 * the callee be detected as something else (a fax, a greeting ending in silence).
 */
export function detection(
  to: string,
  by: 'human' | 'machine',
  mode: 'Enable' | 'DetectMessageEnd',
  timeoutSec: number,
  scripted: AnsweredBy | null,
): { answeredBy: AnsweredBy; durationMs: number } {
  const truth: AnsweredBy = scripted ?? (by === 'human' ? 'human' : 'machine_end_beep');
  const greetingMs = speakingMs(machineGreeting(to));
  const machine = truth.startsWith('machine');
  let result: { answeredBy: AnsweredBy; durationMs: number };
  if (truth === 'human') result = { answeredBy: 'human', durationMs: TWIN_TIMES.humanDetectedMs };
  else if (truth === 'fax') result = { answeredBy: 'fax', durationMs: TWIN_TIMES.faxMs };
  else if (machine && mode === 'Enable')
    result = { answeredBy: 'machine_start', durationMs: TWIN_TIMES.machineStartMs };
  else if (truth === 'machine_end_silence')
    result = { answeredBy: truth, durationMs: greetingMs + TWIN_TIMES.endSilenceMs };
  else if (machine) result = { answeredBy: truth, durationMs: greetingMs + TWIN_TIMES.beepMs };
  else result = { answeredBy: 'unknown', durationMs: timeoutSec * 1_000 };
  return result.durationMs > timeoutSec * 1_000 ? { answeredBy: 'unknown', durationMs: timeoutSec * 1_000 } : result;
}
