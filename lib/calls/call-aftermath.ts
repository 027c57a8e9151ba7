import { REACHING_OUTCOMES, type CallOutcome } from './call-outcomes';

/** Outcomes of a call that was picked up, by a person or a machine: the carrier has a transcript of it. */
export const CONVERSATION_OUTCOMES: readonly CallOutcome[] = REACHING_OUTCOMES;

/**
 * What counts as a failure at the carrier: the carrier's failed state (not an invalid number) and a
 * call lost (no terminal event and unknown to the carrier's lookup, which also ends failed). Busy,
 * no_answer, voicemail and invalid_number are answers about the lead, not about the carrier.
 */
export const CARRIER_FAILURE_OUTCOMES: readonly CallOutcome[] = ['failed'];

/**
 * Whether an ended call has an aftermath (activities/calls/call-aftermath.ts): call intelligence for a
 * conversation, a look at its campaign's carrier breaker for a failure at the carrier. A busy or
 * unanswered call has none, and its workflow asks for nothing. Workflow-safe: no I/O.
 */
export const hasAftermath = (outcome: CallOutcome): boolean =>
  CONVERSATION_OUTCOMES.includes(outcome) || CARRIER_FAILURE_OUTCOMES.includes(outcome);
