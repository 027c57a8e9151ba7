/**
 * How a call attempt ended, as every telephony provider reports it. voicemail_left: a machine answered and the
 * agent's voicemail message was said after its beep (docs/features/carriers/twilio.md#voicemail-drop); plain voicemail: a
 * machine answered and no message was left. The last three are answered calls a tool of the conversation decided
 * (docs/features/conversation/tools.md): the lead opted out, asked to be called back, or was handed to a human; or
 * booked an appointment (docs/features/calendar.md#the-outcome).
 */
export const CALL_OUTCOMES = [
  'answered',
  'busy',
  'no_answer',
  'voicemail',
  'voicemail_left',
  'failed',
  'invalid_number',
  'opted_out',
  'callback_requested',
  'transferred',
  'appointment_booked',
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** The outcomes a conversation's tools give an answered call (Call.conversationOutcome). */
export const TOOL_OUTCOMES = [
  'opted_out',
  'callback_requested',
  'transferred',
  'appointment_booked',
] as const satisfies readonly CallOutcome[];
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];
export const isToolOutcome = (outcome: string): outcome is ToolOutcome =>
  (TOOL_OUTCOMES as readonly string[]).includes(outcome);

/**
 * A person picked up and talked with the agent: answered, and the outcomes its tools gave. The KPIs' "picked up", the
 * lead's completed status. Workflow-safe: no I/O.
 */
export const PICKED_UP_OUTCOMES: readonly CallOutcome[] = ['answered', ...TOOL_OUTCOMES];
export const isPickedUp = (outcome: string | null): boolean =>
  outcome !== null && (PICKED_UP_OUTCOMES as readonly string[]).includes(outcome);

/** Picked up by a person or a machine: the KPIs' "reached", commerce attribution's reaching calls. */
export const REACHING_OUTCOMES: readonly CallOutcome[] = [...PICKED_UP_OUTCOMES, 'voicemail', 'voicemail_left'];

/** A list of outcomes as a SQL literal list, `('a', 'b')`, for `outcome IN ...` (the outcomes are this module's). */
export const sqlOutcomeList = (outcomes: readonly CallOutcome[]): string =>
  `(${outcomes.map((outcome) => `'${outcome}'`).join(', ')})`;
