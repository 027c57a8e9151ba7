import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { normaliseWords } from './words';

const term = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .check(atMostCodePoints(max))
    .refine((text) => normaliseWords(text).length > 0, 'must contain a letter or a digit');

/**
 * What a workspace listens for in its reps' recordings (docs/features/speech.md). Keywords and phrases are
 * matched as word sequences after normaliseWords; the weights say how much each measure counts in the total
 * (they are shares: only their ratios matter); the targets say what a good speaking rate and silence are.
 */
export const scorecardSchema = z.object({
  keywords: z.array(term(100)).max(100).default([]),
  phrases: z.array(term(200)).max(100).default([]),
  weights: z
    .object({
      keywords: z.number().min(0).max(100).default(40),
      phrases: z.number().min(0).max(100).default(30),
      speakingRate: z.number().min(0).max(100).default(15),
      longestSilence: z.number().min(0).max(100).default(15),
    })
    .prefault({}),
  targets: z
    .object({
      minWordsPerMinute: z.number().min(0).max(1000).default(110),
      maxWordsPerMinute: z.number().min(0).max(1000).default(170),
      maxSilenceMs: z.number().int().min(1).max(3_600_000).default(3000),
    })
    .prefault({})
    .refine((targets) => targets.minWordsPerMinute <= targets.maxWordsPerMinute, {
      message: 'minWordsPerMinute must not exceed maxWordsPerMinute',
      path: ['minWordsPerMinute'],
    }),
});

export type Scorecard = z.output<typeof scorecardSchema>;
