import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { VARIABLE_PATH_SOURCE } from './descriptor';

// The schemas of each node type's data, apart from the rest of the journey definition so that journey
// runs can share them: worker/shared-workflow-modules.ts evaluates this module once per worker. Nothing
// exported here is a schema (only functions and frozen-safe lists): the SDK deep-freezes what a shared
// module exports, and a frozen zod schema cannot finish its lazy set-up on first parse.

export const NODE_TYPES = [
  'start',
  'end',
  'call',
  'whatsapp',
  'wait',
  'branch',
  'set_variable',
  'webhook',
  'review',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

const template = (what: string) =>
  z.string().check(atMostCodePoints(10_000)).describe(`${what} May contain {{variable}} references.`);
const identifier = z
  .string()
  .min(1)
  .check(atMostCodePoints(64))
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a letter or "_", then letters, digits or "_"');
const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 24-hour');

export const LEAD_FIELD_TYPES = ['string', 'number', 'boolean', 'datetime'] as const;

/** An issue at [list, index, key] for each item whose key an earlier item has; returns the keys seen. */
function flagDuplicates<K extends string>(
  context: Pick<z.RefinementCtx, 'addIssue'>,
  items: ReadonlyArray<Record<K, string>>,
  list: string,
  key: K,
  label: string,
): Set<string> {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item[key]))
      context.addIssue({ code: 'custom', path: [list, index, key], message: `duplicate ${label} "${item[key]}"` });
    seen.add(item[key]);
  });
  return seen;
}

const startDataSchema = z
  .object({
    fields: z
      .array(
        z
          .object({
            name: identifier.describe('Read as {{start.fields.<name>}}.'),
            type: z.enum(LEAD_FIELD_TYPES),
            description: z.string().check(atMostCodePoints(500)).optional(),
            required: z.boolean().optional().describe('A lead without this field is refused.'),
          })
          .strict(),
      )
      .max(100)
      .optional()
      .describe('Lead fields the journey expects; undeclared fields may still be read.'),
  })
  .strict()
  .superRefine((data, context) => {
    flagDuplicates(context, data.fields ?? [], 'fields', 'name', 'field');
  });

const endDataSchema = z
  .object({
    outcome: z
      .string()
      .min(1)
      .check(atMostCodePoints(64))
      .optional()
      .describe('Label recorded on the run when it ends here, e.g. "converted".'),
  })
  .strict();

const callDataSchema = z
  .object({
    agentId: z
      .string()
      .min(1)
      .check(atMostCodePoints(200))
      .optional()
      .describe("The AI agent placing the call; the campaign's agent when absent."),
    message: template('Opening line or extra instructions for the agent.').optional(),
  })
  .strict();

const whatsappDataSchema = z
  .object({
    templateName: z
      .string()
      .min(1)
      .check(atMostCodePoints(512))
      .describe('Name of an approved WhatsApp message template.'),
    language: z
      .string()
      .regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'a language code such as en or pt_BR')
      .default('en'),
    parameters: z.array(template('Value of one template parameter, in order.')).max(20).default([]),
  })
  .strict();

const waitDataSchema = z
  .object({
    seconds: z.number().int().min(1).max(31_536_000).optional().describe('Wait this long.'),
    until: clock.optional().describe("Wait until the next such time of day in the lead's time zone."),
  })
  .strict()
  .refine((data) => (data.seconds === undefined) !== (data.until === undefined), 'set exactly one of seconds or until');

const conditionSchema = z
  .object({
    variable: z
      .string()
      .regex(new RegExp(`^${VARIABLE_PATH_SOURCE}\\??$`), 'a variable path such as start.fields.plan or n3.outcome')
      .describe(
        'Path of the variable tested, without braces; a trailing "?" allows reading one set on some paths only.',
      ),
    operator: z
      .string()
      .min(1)
      .check(atMostCodePoints(32))
      .describe("Which operators apply depends on the variable's type."),
    value: z
      .union([
        z.string().check(atMostCodePoints(1000)),
        z.number(),
        z.boolean(),
        z.array(z.string().check(atMostCodePoints(1000))).max(100),
      ])
      .optional(),
  })
  .strict();

const handle = z.string().min(1).check(atMostCodePoints(64));

const branchDataSchema = z
  .object({
    rules: z
      .array(
        z
          .object({
            handle: handle.describe('The sourceHandle of the edge taken when this rule matches.'),
            when: conditionSchema,
          })
          .strict(),
      )
      .min(1)
      .max(20)
      .describe('Tried in order; the first that matches wins.'),
    defaultHandle: handle.describe('The sourceHandle of the edge taken when no rule matches.'),
  })
  .strict()
  .superRefine((data, context) => {
    const seen = flagDuplicates(context, data.rules, 'rules', 'handle', 'handle');
    if (seen.has(data.defaultHandle))
      context.addIssue({
        code: 'custom',
        path: ['defaultHandle'],
        message: `duplicate handle "${data.defaultHandle}"`,
      });
  });

export type BranchData = z.infer<typeof branchDataSchema>;
export type Condition = BranchData['rules'][number]['when'];

const SET_VARIABLE_TYPES = ['string', 'number', 'boolean'] as const;

const setVariableDataSchema = z
  .object({
    value: template('The value; rendered, then converted to valueType.'),
    valueType: z.enum(SET_VARIABLE_TYPES).default('string'),
  })
  .strict();

const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'an HTTP header name');

const webhookDataSchema = z
  .object({
    // validateJourney refuses a reference in the scheme or host when a definition is saved; the schema still lets one
    // through so that runs in flight, which parse their nodes again, keep replaying. Checked again once rendered.
    url: template('Where to send the request; must render to an http(s) URL.').regex(
      /^(https?:\/\/|\{\{)/i,
      'must start with http:// or https:// (or a {{reference}} rendering to such a URL)',
    ),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    headers: z.record(headerName, template('Header value.')).optional(),
    body: template('Request body, usually JSON.').optional(),
  })
  .strict();

const reviewDataSchema = z
  .object({
    instructions: z
      .string()
      .min(1)
      .check(atMostCodePoints(2000))
      .describe('What the reviewer should check before deciding.'),
  })
  .strict();

const NODE_DATA_SCHEMAS = {
  start: startDataSchema,
  end: endDataSchema,
  call: callDataSchema,
  whatsapp: whatsappDataSchema,
  wait: waitDataSchema,
  branch: branchDataSchema,
  set_variable: setVariableDataSchema,
  webhook: webhookDataSchema,
  review: reviewDataSchema,
} satisfies Record<NodeType, z.ZodType>;

type NodeDataSchemas = typeof NODE_DATA_SCHEMAS;
/** A node type's data once parsed (defaults applied). */
export type NodeData<T extends NodeType> = z.output<NodeDataSchemas[T]>;

/** The schema of a node type's data. */
export function nodeDataSchema<T extends NodeType>(type: T): NodeDataSchemas[T] {
  return NODE_DATA_SCHEMAS[type];
}

export function isNodeType(type: string): type is NodeType {
  return (NODE_TYPES as readonly string[]).includes(type);
}

export type NodeDataParse =
  { ok: true; type: NodeType; data: unknown } | { ok: false; type: NodeType | null; issues: z.core.$ZodIssue[] };

/** A node's data parsed by its type's schema; `type: null` for an unknown type. */
export function safeParseNodeData(node: { type: string; data: unknown }): NodeDataParse {
  if (!isNodeType(node.type)) return { ok: false, type: null, issues: [] };
  const parsed = nodeDataSchema(node.type).safeParse(node.data);
  return parsed.success
    ? { ok: true, type: node.type, data: parsed.data }
    : { ok: false, type: node.type, issues: parsed.error.issues };
}
