import type { CallOutcome } from './call-outcomes';

/** A call that has ended, as its waiting workflow learns it (callEndedSignal) and the activities answer it. */
export interface EndedCall {
  attemptId: string;
  callId: string;
  outcome: CallOutcome;
  durationMs: number | null;
  /**
   * The call's end settled its lead (finished), as the call said it should (Call.settlesLeadOn, set by the lead's
   * ladder when it dialed): the ladder has nothing left to do. Absent: the lead's workflow settles it.
   */
  leadSettled?: true;
  /**
   * When the lead asked to be called back (outcome callback_requested, Call.callbackAt; ISO 8601): the ladder's next
   * attempt is then. Absent: no time asked for.
   */
  callbackAt?: string;
}
