import type { CallOutcome } from './call-outcomes';

/** A call that has ended, as its waiting workflow learns it (callEndedSignal) and the activities answer it. */
export interface EndedCall {
  attemptId: string;
  callId: string;
  outcome: CallOutcome;
  durationMs: number | null;
}
