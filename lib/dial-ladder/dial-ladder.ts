import { z } from 'zod';
import { CALL_OUTCOMES } from '../calls/call-outcomes';

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
  outcomes: z.record(z.enum(CALL_OUTCOMES), ladderRuleSchema),
});

export type DialLadder = z.infer<typeof dialLadderSchema>;

/** Now, +2 hours, +1 day. Answered and invalid numbers end the ladder; every other outcome moves on. */
export const DEFAULT_DIAL_LADDER: DialLadder = {
  rungs: [{ delaySeconds: 0 }, { delaySeconds: 2 * 3600 }, { delaySeconds: 24 * 3600 }],
  outcomes: {
    answered: 'end',
    busy: 'next',
    no_answer: 'next',
    voicemail: 'next',
    failed: 'next',
    invalid_number: 'end',
  },
};
