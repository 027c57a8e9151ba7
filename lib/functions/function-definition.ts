import { z } from 'zod';
import { isHttpUrl } from '../result-webhooks/result-webhooks';

/*
 * What a custom function is made of (docs/features/functions.md#a-function), checked when the operator makes one
 * (`function create`): every cap here bounds what the product later hands a model and sends to the endpoint.
 */

/**
 * The tool names a model is offered beside custom functions (the four, and the calendar's two:
 * docs/features/calendar.md#the-tools): a function may not take one.
 */
const RESERVED_NAMES = new Set([
  'end_call',
  'transfer_to_human',
  'schedule_callback',
  'opt_out',
  'check_availability',
  'book_appointment',
]);

export const FUNCTION_LIMITS = {
  /** The model is offered the schema on every turn: 8 KiB keeps a few functions within a prompt's budget. */
  parametersBytes: 8 * 1024,
  /** Nesting of the schema's objects and arrays (a property is two: `properties` and its schema): a list of addresses fits. */
  parametersDepth: 10,
  descriptionLength: 1_000,
  presets: 20,
  presetLength: 500,
  /** A preset as sent, its variables filled: a lead's field may be long, a request need not be. */
  renderedPresetLength: 8_192,
  lineLength: 300,
  /**
   * Default 20 s (Vapi's default too): long enough for a booking system, short enough that the person on the line is
   * not left waiting past the slow line. At most 60 s: a call holds a line and the person waits all that time.
   */
  timeoutMs: { default: 20_000, min: 1_000, max: 60_000 },
  /** The model's arguments as sent: a tool call's arguments are a few fields. */
  argumentsBytes: 8 * 1024,
  /** What the model is given of the answer (code points); the rest is cut, and the cut said. */
  resultLength: 2_000,
  /** The most of an answer read at all; a larger one is "too large" and its content not given. */
  responseBytes: 64 * 1024,
} as const;

export const FUNCTION_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

/** POST, PUT and PATCH: the arguments travel as a signed JSON body (a GET has none to sign). */
export const FUNCTION_METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** The variables a preset may name (docs/features/functions.md#presets). */
export const PRESET_VARIABLE_PATTERN =
  /\{\{\s*(call\.id|lead\.id|lead\.name|lead\.phone|lead\.fields\.[A-Za-z0-9_]{1,64}|campaign\.id|agent\.id)\s*\}\}/g;

/** Depth of nested objects and arrays, read once (iteratively: a hostile depth cannot overflow the stack). */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** Checked in this order, each only when the one before passed: a hostile depth never reaches JSON.stringify. */
export const functionParametersSchema = z.record(z.string(), z.unknown()).superRefine((schema, context) => {
  const problem =
    schema.type !== 'object'
      ? 'must be a JSON Schema of type "object"'
      : jsonDepth(schema) > FUNCTION_LIMITS.parametersDepth
        ? `must nest at most ${FUNCTION_LIMITS.parametersDepth} levels`
        : jsonBytes(schema) > FUNCTION_LIMITS.parametersBytes
          ? `must be at most ${FUNCTION_LIMITS.parametersBytes} bytes as JSON`
          : null;
  if (problem) context.addIssue({ code: 'custom', message: problem, input: schema });
});

const presetTemplate = z
  .string()
  .max(FUNCTION_LIMITS.presetLength)
  .refine((template) => {
    // Every {{ }} must be one of the known variables: a misspelt one would be sent as written.
    const unknown = template.replace(PRESET_VARIABLE_PATTERN, '');
    return !unknown.includes('{{');
  }, 'names a variable that does not exist (call.id, lead.id, lead.name, lead.phone, lead.fields.<name>, campaign.id, agent.id)');

export const functionPresetsSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a preset name is a plain identifier'), presetTemplate)
  .refine(
    (presets) => Object.keys(presets).length <= FUNCTION_LIMITS.presets,
    `at most ${FUNCTION_LIMITS.presets} presets`,
  );

const line = z.string().trim().min(1).max(FUNCTION_LIMITS.lineLength);

export const functionDefinitionSchema = z.strictObject({
  name: z
    .string()
    .regex(FUNCTION_NAME_PATTERN, 'a letter, then letters, digits or _ (at most 64)')
    .refine((name) => !RESERVED_NAMES.has(name), 'is the name of a built-in tool'),
  description: z.string().trim().min(1).max(FUNCTION_LIMITS.descriptionLength),
  parameters: functionParametersSchema.default({ type: 'object', properties: {} }),
  presets: functionPresetsSchema.default({}),
  url: z.string().trim().refine(isHttpUrl, 'must be an absolute http(s) URL'),
  method: z.enum(FUNCTION_METHODS).default('POST'),
  timeoutMs: z
    .number()
    .int()
    .min(FUNCTION_LIMITS.timeoutMs.min)
    .max(FUNCTION_LIMITS.timeoutMs.max)
    .default(FUNCTION_LIMITS.timeoutMs.default),
  fillerLine: line.nullable().default(null),
  slowLine: line.nullable().default(null),
});

export type FunctionDefinition = z.infer<typeof functionDefinitionSchema>;

/** What a preset is rendered from: the call and its lead. */
export interface PresetContext {
  callId: string;
  leadId: string | null;
  leadName: string | null;
  leadPhone: string | null;
  leadFields: Record<string, unknown>;
  campaignId: string | null;
  agentId: string | null;
}

/**
 * Each preset's template with its variables filled (a missing value is ""), cut at renderedPresetLength: one pass over
 * the template, stopped as soon as the cut is reached, so long fields named many times cost no more than the cut.
 */
export function renderPresets(presets: Record<string, string>, context: PresetContext): Record<string, string> {
  const scalar = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
  const valueOf = (variable: string): string => {
    if (variable === 'call.id') return context.callId;
    if (variable === 'lead.id') return context.leadId ?? '';
    if (variable === 'lead.name') return context.leadName ?? '';
    if (variable === 'lead.phone') return context.leadPhone ?? '';
    if (variable === 'campaign.id') return context.campaignId ?? '';
    if (variable === 'agent.id') return context.agentId ?? '';
    const field = variable.slice('lead.fields.'.length);
    return Object.hasOwn(context.leadFields, field) ? scalar(context.leadFields[field]) : '';
  };
  const cap = FUNCTION_LIMITS.renderedPresetLength;
  const render = (template: string) => {
    let rendered = '';
    let after = 0;
    for (const match of template.matchAll(PRESET_VARIABLE_PATTERN)) {
      rendered += template.slice(after, match.index) + valueOf(match[1]!);
      after = match.index + match[0].length;
      if (rendered.length >= cap) return rendered.slice(0, cap);
    }
    return (rendered + template.slice(after)).slice(0, cap);
  };
  return Object.fromEntries(Object.entries(presets).map(([name, template]) => [name, render(template)]));
}
