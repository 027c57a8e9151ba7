import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { Transcript, TranscriptTurn } from '../calls/transcript';
import type { IntelligenceFallback } from './call-intelligence';
import {
  MODEL_BOUNDS_DEFAULTS,
  ModelTimeout,
  modelFailureOf,
  openAiClient,
  type OpenAiEndpoint,
} from '../openai-client';
import { EVALUATION_RULES, MIN_TALK_MS, type CallEvaluation, type EvaluationRule } from './call-evaluation';
import type {
  CallAnalysis,
  CallAnalysisRequest,
  CallIntelligenceModel,
  Extraction,
  ExtractionFieldSpec,
} from './extraction';

/**
 * Call intelligence by a model (docs/features/call-intelligence.md#by-a-model): one chat completion, with structured
 * outputs (`response_format` json_schema, strict), whose schema is made from the agent's extraction fields and the six
 * evaluation rules; the answer is validated with the same (zod) schema the JSON Schema was generated from. Any failure
 * is a ModelIntelligenceFailure naming its reason, for the activity to fall back to the rules.
 */
export interface ModelIntelligenceOptions extends OpenAiEndpoint {
  /** Recorded as the intelligence's provider: openai-compatible, or openai-twin for the twin. */
  name: 'openai-compatible' | 'openai-twin';
  model: string;
  /** `max_tokens` of the answer (MODEL_MAX_TOKENS_INTELLIGENCE); default 2,000. A longer answer is cut (finish_reason length) and the rules answer. */
  maxTokens?: number;
}

/** The name of the structured output, as sent in `response_format.json_schema.name`. */
export const INTELLIGENCE_SCHEMA_NAME = 'call_intelligence';

export type ModelFailureReason = IntelligenceFallback['reason'];

/** Why the model gave no usable answer: `detail` is safe to store and log (never the key, the answer or a message). */
export class ModelIntelligenceFailure extends Error {
  constructor(
    readonly reason: ModelFailureReason,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

const RULES = Object.keys(EVALUATION_RULES) as EvaluationRule[];

/** What each rule gives its points for, as the model is told (the rules of lib/call-intelligence/call-evaluation.ts). */
const RULE_MEANINGS: Record<EvaluationRule, string> = {
  answered_by_human: 'a person answered, not an answering machine or voicemail.',
  opening_said: 'the agent said the opening line of the script (full points when there is none).',
  questions_asked:
    "the share of the script's questions the agent asked, in its own words or the script's (full points when there are none).",
  fields_filled: 'the share of the extraction fields the call gave a value for (full points when there are none).',
  closing_said: 'the agent said the closing of the script (full points when it is empty).',
  call_length: `the conversation lasted at least ${MIN_TALK_MS / 1000} s; shorter means it was cut short.`,
};

/** A field's value as its type reads (the same reading as the rule-based extractor's). */
function valueSchema(field: ExtractionFieldSpec): z.ZodType<string | number | boolean> {
  switch (field.type) {
    case 'number':
      return z.number();
    case 'boolean':
      return z.boolean();
    case 'enum':
      return field.allowedValues?.length ? z.enum(field.allowedValues as [string, ...string[]]) : z.string();
    case 'date':
      return z.iso.date();
    default:
      return z.string();
  }
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  boolean: 'true or false',
  enum: 'exactly one of the allowed values',
  date: 'a date, YYYY-MM-DD',
  string: "the lead's words for it",
};

/**
 * The answer the model must give, as a zod schema: `extraction` (each field: value or null, confidence 0 to 1, the
 * lead's words it came from) and `evaluation` (each rule: points 0 to its most, and why). The JSON Schema sent is
 * generated from it, and the answer is validated with it.
 */
export function intelligenceAnswerSchema(fields: ReadonlyArray<ExtractionFieldSpec>) {
  const extraction = z.strictObject(
    Object.fromEntries(
      fields.map((field) => [
        field.name,
        z
          .strictObject({
            value: valueSchema(field)
              .nullable()
              .describe(`${TYPE_WORDS[field.type] ?? TYPE_WORDS.string}; null when the call does not give it.`),
            confidence: z.number().min(0).max(1).describe('0 to 1: how sure you are; 0 when value is null.'),
            evidence: z
              .string()
              .nullable()
              .describe("The lead's words the value was read from, as in the transcript; null when none."),
          })
          .describe(field.description?.trim() ? field.description.trim() : `The ${field.type} field ${field.name}.`),
      ]),
    ),
  );
  const evaluation = z.strictObject(
    Object.fromEntries(
      RULES.map((rule) => [
        rule,
        z
          .strictObject({
            points: z.number().int().min(0).max(EVALUATION_RULES[rule]),
            detail: z.string().describe('Why, in one short English sentence.'),
          })
          .describe(`Up to ${EVALUATION_RULES[rule]} points: ${RULE_MEANINGS[rule]}`),
      ]),
    ),
  );
  return z.strictObject({ extraction, evaluation });
}

/** The JSON Schema of the answer, as `response_format.json_schema.schema` (strict: every object closed, every property required). */
export function intelligenceJsonSchema(fields: ReadonlyArray<ExtractionFieldSpec>): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(intelligenceAnswerSchema(fields)) as Record<string, unknown>;
  return withRequired(schema) as Record<string, unknown>;
}

/** Strict mode wants `required` on every object, even one without properties (an agent with no fields): zod omits it then. */
function withRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withRequired);
  if (!node || typeof node !== 'object') return node;
  const object = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withRequired(value)]));
  if (object.type === 'object' && !Array.isArray(object.required))
    object.required = Object.keys((object.properties as object | undefined) ?? {});
  return object;
}

const clock = (offsetMs: number) => {
  const seconds = Math.floor(offsetMs / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/**
 * One transcript turn as a line of the user message: `[m:ss] agent: words`, `[m:ss] lead: words` (with the carrier's
 * recognition confidence when it gave one), and a tool turn as what it is: the tool the agent used, its arguments and
 * what it answered, never as words someone said.
 */
export function transcriptLine(turn: TranscriptTurn): string {
  const at = `[${clock(turn.offsetMs)}]`;
  if (turn.speaker === 'tool') {
    const tool = turn.tool;
    if (!tool) return `${at} tool: ${turn.text}`;
    return `${at} tool: ${tool.name} ${JSON.stringify(tool.arguments)} -> ${tool.ok ? 'ok' : 'failed'}: ${tool.result}`;
  }
  const heard =
    turn.speaker === 'lead' && turn.confidence !== undefined ? ` (heard with confidence ${turn.confidence})` : '';
  return `${at} ${turn.speaker}${heard}: ${turn.text}`;
}

const transcriptText = (transcript: Transcript) =>
  transcript.length ? transcript.map(transcriptLine).join('\n') : '(the transcript has no turns)';

/** The system message: the task, the fields, the rules with their points, the script and the call's facts. */
export function intelligenceSystemMessage(request: CallAnalysisRequest): string {
  const fields = request.fields.map((field) => {
    const allowed = field.type === 'enum' && field.allowedValues?.length ? `: ${field.allowedValues.join(', ')}` : '';
    const description = field.description?.trim() ? ` ${field.description.trim()}` : '';
    return `- ${field.name} (${field.type}${allowed}):${description}`;
  });
  const script = request.script;
  return [
    'You analyse one answered outbound call from its transcript, for the business that placed it. Answer only with ' +
      'the JSON object the response format describes.',
    'Extraction: for each field, the value the lead gave during the call, as its type reads, with your confidence ' +
      "(0 to 1) and the lead's words it came from. A field the call does not give is null, with confidence 0 and " +
      "evidence null. Never invent a value, and never take for the lead's what only the agent said.",
    fields.length ? ['The fields:', ...fields].join('\n') : 'The agent has no extraction fields.',
    'Evaluation: give each rule its points, from 0 to its most, and a short reason:',
    RULES.map((rule) => `- ${rule} (at most ${EVALUATION_RULES[rule]}): ${RULE_MEANINGS[rule]}`).join('\n'),
    script
      ? [
          "The agent's script:",
          `- opening line: ${script.openingLine}`,
          ...(script.questions.length
            ? ['- questions:', ...script.questions.map((question, index) => `  ${index + 1}. ${question}`)]
            : ['- questions: none']),
          `- closing: ${script.closing.trim() ? script.closing : '(none)'}`,
          "{{name}} and other {{variables}} in the script stand for the lead's values.",
        ].join('\n')
      : 'The call had no script.',
    [
      'The call:',
      `- answered by: ${request.answeredBy ?? 'unknown'}`,
      `- talk time: ${request.durationMs === null ? 'unknown' : `${Math.round(request.durationMs / 1000)} s`}`,
      `- language: ${request.language} (BCP 47)`,
    ].join('\n'),
    'The transcript is the user message, one turn per line: [minutes:seconds] speaker: words. The speaker is agent ' +
      '(the AI agent that called), lead (the person called, or their answering machine) or tool (a tool the agent ' +
      'used during the call, with its arguments and its result; nobody said it).',
  ].join('\n\n');
}

/** The request the model is sent (without the model name): the messages and the structured output's schema. */
export function intelligenceRequestOf(request: CallAnalysisRequest) {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: intelligenceSystemMessage(request) },
    { role: 'user', content: transcriptText(request.transcript) },
  ];
  return {
    messages,
    response_format: {
      type: 'json_schema' as const,
      json_schema: { name: INTELLIGENCE_SCHEMA_NAME, strict: true, schema: intelligenceJsonSchema(request.fields) },
    },
  };
}

/** Where a zod issue is and what kind, without the value (an answer may hold the lead's words). */
const issueText = (issue: z.core.$ZodIssue) => `${issue.path.join('.') || '(root)'}: ${issue.code}`;

/**
 * The model's answer read: JSON, valid against the request's schema, into the stored shape (each field in the agent's
 * order, a null value with confidence 0; the evaluation's reasons in the rules' order, the score their sum).
 */
export function analysisOf(fields: ReadonlyArray<ExtractionFieldSpec>, content: string): CallAnalysis {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    throw new ModelIntelligenceFailure('invalid_output', 'the answer is not JSON');
  }
  const parsed = intelligenceAnswerSchema(fields).safeParse(json);
  if (!parsed.success)
    throw new ModelIntelligenceFailure(
      'invalid_output',
      `the answer does not match the schema (${parsed.error.issues.slice(0, 3).map(issueText).join('; ')})`,
    );
  const answer = parsed.data as {
    extraction: Record<
      string,
      { value: string | number | boolean | null; confidence: number; evidence: string | null }
    >;
    evaluation: Record<EvaluationRule, { points: number; detail: string }>;
  };
  const extraction: Extraction = {};
  for (const field of fields) {
    const { value, confidence, evidence } = answer.extraction[field.name]!;
    extraction[field.name] = { value, confidence: value === null ? 0 : confidence, evidence };
  }
  const reasons = RULES.map((rule) => ({
    rule,
    points: answer.evaluation[rule].points,
    maxPoints: EVALUATION_RULES[rule],
    detail: answer.evaluation[rule].detail,
  }));
  const evaluation: CallEvaluation = { score: reasons.reduce((sum, reason) => sum + reason.points, 0), reasons };
  return { extraction, evaluation };
}

/** A failure of the request, by its reason. */
function failureOf(error: unknown, timedOut: boolean): ModelIntelligenceFailure {
  if (error instanceof ModelIntelligenceFailure) return error;
  if (timedOut || error instanceof ModelTimeout || error instanceof OpenAI.APIConnectionTimeoutError)
    return new ModelIntelligenceFailure('timeout', 'no answer in time');
  if (error instanceof OpenAI.APIConnectionError)
    return new ModelIntelligenceFailure('unreachable', 'the endpoint could not be reached');
  if (error instanceof OpenAI.APIError && error.status !== undefined)
    return new ModelIntelligenceFailure('http_error', `HTTP ${error.status}${error.code ? ` (${error.code})` : ''}`);
  return new ModelIntelligenceFailure('error', modelFailureOf(error).failure);
}

/** Call intelligence by the model behind an OpenAI-compatible endpoint (the official SDK, its retries off). */
export function createModelIntelligence(options: ModelIntelligenceOptions): CallIntelligenceModel {
  const client = openAiClient(options);
  return {
    name: options.name,
    async analyse(request) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      let content: string;
      try {
        const completion = await client.chat.completions.create(
          {
            model: options.model,
            max_tokens: options.maxTokens ?? MODEL_BOUNDS_DEFAULTS.intelligenceMaxTokens,
            ...intelligenceRequestOf(request),
          },
          { signal: timeout },
        );
        const choice = completion.choices[0];
        const message = choice?.message;
        if (choice?.finish_reason === 'length')
          throw new ModelIntelligenceFailure('invalid_output', 'the answer was cut short (finish_reason length)');
        if (message?.refusal) throw new ModelIntelligenceFailure('invalid_output', 'the model refused');
        if (!message?.content) throw new ModelIntelligenceFailure('invalid_output', 'the answer has no content');
        content = message.content;
      } catch (error) {
        throw failureOf(error, timeout.aborted);
      }
      return analysisOf(request.fields, content);
    },
  };
}
