/** How a call attempt ended, as every telephony provider reports it. */
export const CALL_OUTCOMES = ['answered', 'busy', 'no_answer', 'voicemail', 'failed', 'invalid_number'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];
