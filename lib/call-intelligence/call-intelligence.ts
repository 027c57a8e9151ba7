import { z } from 'zod';
import { EVALUATION_RULES, type EvaluationRule } from './call-evaluation';

/**
 * A call's intelligence as stored on the call (Call.intelligence) and answered by the API: the agent's
 * extraction fields filled from the transcript, the call's evaluation, the extraction provider that
 * filled them and when (docs/features/call-intelligence.md).
 */
export const extractedValueSchema = z.object({
  value: z
    .union([z.string(), z.number(), z.boolean()])
    .nullable()
    .describe('The field as its type reads (enum: one of allowedValues; date: YYYY-MM-DD); null: not found.'),
  confidence: z.number().min(0).max(1).describe('0 to 1; 0 when value is null.'),
  evidence: z.string().nullable().describe("The lead's words the value was read from."),
});

export const callEvaluationSchema = z.object({
  score: z.number().int().min(0).max(100).describe('The sum of the points of the reasons.'),
  reasons: z.array(
    z.object({
      rule: z.enum(Object.keys(EVALUATION_RULES) as [EvaluationRule, ...EvaluationRule[]]),
      points: z.number().int().min(0),
      maxPoints: z.number().int().min(0),
      detail: z.string(),
    }),
  ),
});

/** Set when a model was configured but the rules filled this call: which model, and why (docs/features/call-intelligence.md#by-a-model). */
export const intelligenceFallbackSchema = z
  .object({
    from: z.string().describe('The provider that failed: openai-compatible or openai-twin.'),
    reason: z
      .enum(['timeout', 'http_error', 'unreachable', 'invalid_output', 'error'])
      .describe(
        'timeout: no answer within INTELLIGENCE_TIMEOUT_MS; http_error: the endpoint answered an error status; unreachable: ' +
          'no connection; invalid_output: an answer that is not JSON, does not match the schema, was cut short or refused; ' +
          'error: the provider failed otherwise.',
      ),
    detail: z
      .string()
      .describe('A short account (an HTTP status, where the answer broke the schema); never the answer itself.'),
  })
  .describe('Only when the model failed for this call and the rule-based provider filled it instead.');

export type IntelligenceFallback = z.infer<typeof intelligenceFallbackSchema>;

export const callIntelligenceSchema = z.object({
  extraction: z
    .record(z.string(), extractedValueSchema)
    .describe("Each of the agent's extraction fields by name, as the provider filled it."),
  evaluation: callEvaluationSchema,
  provider: z
    .string()
    .describe(
      'Who filled the extraction and the evaluation: rule-based (the embedded rules), openai-compatible (a model), ' +
        'openai-twin (the OpenAI twin).',
    ),
  fallback: intelligenceFallbackSchema.optional(),
  optOut: z
    .object({ evidence: z.string().describe("The lead's words that asked not to be called again.") })
    .optional()
    .describe(
      "Only when the lead asked not to be called again (docs/features/call-intelligence.md#the-opt-out-rule): a campaign call's number is then on the workspace's Do-Not-Call list (source call_intelligence, unless it was listed before).",
    ),
  computedAt: z.iso.datetime().describe('When this intelligence was computed; a re-run replaces it.'),
  jobId: z
    .string()
    .describe(
      'The job (Temporal workflow) that computed it: the jobId POST /calls/{id}/intelligence answered, once that re-run is done.',
    ),
});

export type CallIntelligence = z.infer<typeof callIntelligenceSchema>;

/** What callIntelligenceWorkflow is started with (lib/temporal/start-call-intelligence.ts). */
export interface CallIntelligenceInput {
  callId: string;
}

/** What callIntelligenceWorkflow answers: the call's score, or no_transcript when none could be had. */
export type CallIntelligenceResult = { status: 'computed'; score: number } | { status: 'no_transcript' };
