import { z } from 'zod';

/**
 * A call's transcript as stored on the call (Call.transcript) and answered by GET /calls/{id}: the turns
 * in order, each with who spoke and when, from the moment the call was answered.
 */
export const transcriptTurnSchema = z.object({
  speaker: z
    .enum(['agent', 'lead', 'tool'])
    .describe(
      'agent: the AI calling agent; lead: the person called; tool: a tool the agent used during the call ' +
        '(docs/features/conversation/tools.md), its name in text.',
    ),
  text: z.string(),
  offsetMs: z.number().int().min(0).describe('Milliseconds from the answer to the start of the turn.'),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("The carrier's speech-recognition confidence of a lead's answer, when it gave one."),
  tool: z
    .object({
      name: z
        .string()
        .describe(
          'One of the four tools (end_call, transfer_to_human, schedule_callback, opt_out) or one of the ' +
            "agent's custom functions (docs/features/functions.md).",
        ),
      arguments: z
        .record(z.string(), z.json())
        .describe("What the agent passed (a custom function's arguments as the model gave them, nested or not)."),
      result: z.string().describe('What the tool answered the agent.'),
      ok: z.boolean().describe('The tool did what it was asked.'),
    })
    .optional()
    .describe('A tool turn only: the tool the agent used.'),
});

export const transcriptSchema = z.array(transcriptTurnSchema);

export type TranscriptTurn = z.infer<typeof transcriptTurnSchema>;
export type Transcript = TranscriptTurn[];
