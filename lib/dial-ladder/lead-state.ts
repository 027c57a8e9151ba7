import type { CallOutcome } from '../calls/call-outcomes';

/*
 * What leadDialWorkflow (workflows/dial-ladder/legacy/lead-dial.ts) is started with, what it answers and what its
 * leadState query tells: types only, so that whoever starts or queries it (lib/temporal/) loads no workflow code.
 */

export interface LeadDialInput {
  leadId: string;
  /**
   * Set when the ladder is one call node of a journey run (a child workflow): attempts are told apart
   * by it, and the run, not the ladder, finishes the lead and reports it.
   */
  callKey?: string;
  /** A journey's call node naming its own agent: its calls are placed with it instead of the campaign's. */
  agentId?: string;
}

export type LeadOutcome = CallOutcome | 'do_not_call' | 'campaign_stopped' | 'no_calling_window';

export interface LeadDialResult {
  status: 'completed' | 'failed' | 'cancelled';
  /** The last attempt's outcome, or why the lead ended without one; null when never dialed. */
  outcome: LeadOutcome | null;
  attempts: number;
  /** A journey's call node only: the last call placed, if any. */
  lastCall?: { callId: string; durationMs: number | null };
}

export type LeadPhase =
  | 'preparing'
  | 'waiting_for_rung'
  | 'waiting_for_window'
  | 'waiting_for_campaign'
  | 'waiting_for_line'
  | 'dialing'
  /** The carrier took the call: waiting for its terminal event (or the deadline, then the carrier's lookup). */
  | 'on_call'
  | 'finished';

export interface LeadState {
  phase: LeadPhase;
  /** The attempt being made or waited for (1-based). */
  attempt: number;
  lastOutcome: LeadOutcome | null;
  /** When a waiting lead wakes up by itself (ISO 8601). */
  nextWakeAt: string | null;
}
