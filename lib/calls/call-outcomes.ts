/**
 * How a call attempt ended, as every telephony provider reports it. voicemail_left: a machine answered and the
 * agent's voicemail message was said after its beep (docs/features/carriers.md#voicemail-drop); plain voicemail: a
 * machine answered and no message was left.
 */
export const CALL_OUTCOMES = [
  'answered',
  'busy',
  'no_answer',
  'voicemail',
  'voicemail_left',
  'failed',
  'invalid_number',
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];
