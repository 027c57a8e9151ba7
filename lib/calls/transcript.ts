import { z } from 'zod';

/**
 * A call's transcript as stored on the call (Call.transcript) and answered by GET /calls/{id}: the turns
 * in order, each with who spoke and when, from the moment the call was answered.
 */
export const transcriptTurnSchema = z.object({
  speaker: z.enum(['agent', 'lead']).describe('agent: the AI calling agent; lead: the person called.'),
  text: z.string(),
  offsetMs: z.number().int().min(0).describe('Milliseconds from the answer to the start of the turn.'),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("The carrier's speech-recognition confidence of a lead's answer, when it gave one."),
});

export const transcriptSchema = z.array(transcriptTurnSchema);

export type TranscriptTurn = z.infer<typeof transcriptTurnSchema>;
export type Transcript = TranscriptTurn[];
