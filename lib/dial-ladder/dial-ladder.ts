import { z } from 'zod';
import { CALL_OUTCOMES, type CallOutcome } from '../calls/call-outcomes';
import { hasAftermath } from '../calls/call-aftermath';
import { OPTIONAL_OUTCOMES, withEveryOutcomeRule } from './ladder-rules';

/** Outcomes every ladder gives a rule for. */
const RULED_OUTCOMES = CALL_OUTCOMES.filter(
  (
    outcome,
  ): outcome is Exclude<
    CallOutcome,
    'voicemail_left' | 'opted_out' | 'callback_requested' | 'transferred' | 'appointment_booked'
  > => !(OPTIONAL_OUTCOMES as readonly CallOutcome[]).includes(outcome),
);

/** What an attempt's outcome does to the ladder: end it, or move to the next rung after its delay. */
export const ladderRuleSchema = z.enum(['end', 'next']);

export const dialLadderSchema = z.object({
  rungs: z
    .array(
      z.object({
        delaySeconds: z
          .number()
          .int()
          .min(0)
          .max(30 * 24 * 3600)
          .describe('Wait after the previous attempt (0 for the first rung: at once).'),
      }),
    )
    .min(1)
    .max(10),
  outcomes: z
    .strictObject({
      ...(Object.fromEntries(RULED_OUTCOMES.map((outcome) => [outcome, ladderRuleSchema])) as Record<
        (typeof RULED_OUTCOMES)[number],
        typeof ladderRuleSchema
      >),
      voicemail_left: ladderRuleSchema
        .optional()
        .describe("A machine took the agent's voicemail message. Not given: the voicemail rule."),
      opted_out: z
        .literal('end')
        .optional()
        .describe('The lead opted out during the call (its number is on the Do-Not-Call list): always end.'),
      callback_requested: ladderRuleSchema
        .optional()
        .describe(
          'The lead asked to be called back. next (the default): the next attempt at the time the lead asked for ' +
            '(inside the calling window), even after the last rung, once; without a time, the next rung. end: no callback.',
        ),
      transferred: ladderRuleSchema.optional().describe('The call was handed to a human who answered. Not given: end.'),
      appointment_booked: z
        .literal('end')
        .optional()
        .describe('The lead booked an appointment during the call (book_appointment): always end.'),
    })
    .describe('What each outcome of an attempt does: end the ladder, or move to the next rung.'),
});

export type DialLadder = z.infer<typeof dialLadderSchema>;

/**
 * Now, +2 hours, +1 day. Answered and invalid numbers end the ladder; every other outcome moves on, a voicemail left
 * included (the lead was not reached in person; a campaign that wants one message only sets voicemail_left: end).
 */
export const DEFAULT_DIAL_LADDER: DialLadder = {
  rungs: [{ delaySeconds: 0 }, { delaySeconds: 2 * 3600 }, { delaySeconds: 24 * 3600 }],
  outcomes: {
    answered: 'end',
    busy: 'next',
    no_answer: 'next',
    voicemail: 'next',
    voicemail_left: 'next',
    failed: 'next',
    invalid_number: 'end',
  },
};

/**
 * The outcomes of attempt `attempt` (1-based) that end the ladder (its rule says end, or no rung follows) and leave
 * nothing for the lead's workflow to do after the call (no aftermath): on these the call's end settles the lead
 * (Call.settlesLeadOn, lib/calls/call-end.ts). The lead's final status then follows the outcome as the ladder's does:
 * answered completes it, anything else fails it.
 */
export const outcomesSettledAtEnd = (ladder: DialLadder, attempt: number): CallOutcome[] =>
  outcomesEndingLadder(ladder, attempt).filter((outcome) => !hasAftermath(outcome));

/** The outcomes of attempt `attempt` (1-based) that end the ladder: its rule says end, or no rung follows. */
export const outcomesEndingLadder = (ladder: DialLadder, attempt: number): CallOutcome[] =>
  CALL_OUTCOMES.filter(
    (outcome) => ladder.rungs[attempt] === undefined || withEveryOutcomeRule(ladder).outcomes[outcome] === 'end',
  );
