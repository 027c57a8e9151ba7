import { z } from 'zod';
import { CALL_OUTCOMES } from '../call-outcomes';
import { descriptor, VARIABLE_PATH_SOURCE, type VariableDescriptor } from './descriptor';

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

export interface JourneyNode {
  id: string;
  type: string;
  position: { x: number; y: number };
  data: Record<string, unknown>;
}
export interface JourneyEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle?: string;
}
export interface JourneyDefinition {
  definitionVersion: number;
  nodes: JourneyNode[];
  edges: JourneyEdge[];
}

export const MAX_NODES = 200;
export const MAX_EDGES = 400;

const nodeIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'a letter, then letters, digits, "_" or "-"');

/**
 * The body shape only. A node's `type` is any string here: an unknown type, like every other graph
 * problem, is reported by validateJourney with the node it concerns.
 */
export const journeyDefinitionSchema: z.ZodType<JourneyDefinition> = z.object({
  definitionVersion: z.literal(1, { error: 'must be 1' }).describe('Version of this format; only 1 exists.'),
  nodes: z
    .array(
      z.object({
        id: nodeIdSchema.describe(
          'Unique within the journey; also the name its output is read by, as in {{n3.outcome}}.',
        ),
        type: z
          .string()
          .min(1)
          .max(64)
          .describe(`One of ${NODE_TYPES.join(', ')}.`),
        position: z
          .object({ x: z.number(), y: z.number() })
          .describe('Where the editor draws the node; ignored when running.'),
        data: z.record(z.string(), z.unknown()).default({}).describe('Settings of the node, shaped by its type.'),
      }),
    )
    .max(MAX_NODES),
  edges: z
    .array(
      z.object({
        id: z.string().min(1).max(200),
        source: z.string().min(1).max(64),
        target: z.string().min(1).max(64),
        sourceHandle: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .describe('On edges leaving a branch node: the rule handle (or default handle) the edge belongs to.'),
      }),
    )
    .max(MAX_EDGES),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry holds specs of every data shape
export interface NodeTypeSpec<D = any> {
  type: NodeType;
  label: string;
  dataSchema: z.ZodType<D>;
  /** The node's output, named by the node id (the start node's by START_VARIABLE); null when it produces nothing. */
  output(data: D, nodeId: string): VariableDescriptor | null;
  /** Every string in data that may contain {{...}} references. */
  templates(data: D): string[];
  /** Durably waits; a cycle must pass through such a node, or a run would spin without pause. */
  isWait: boolean;
}

const template = (what: string) => z.string().max(10_000).describe(`${what} May contain {{variable}} references.`);
const identifier = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a letter or "_", then letters, digits or "_"');
const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 24-hour');

/** The start node's output, whatever its id; no other node may take this id. */
export const START_VARIABLE = 'start';

export const LEAD_FIELD_TYPES = ['string', 'number', 'boolean', 'datetime'] as const;

const startDataSchema = z
  .object({
    fields: z
      .array(
        z
          .object({
            name: identifier.describe('Read as {{start.fields.<name>}}.'),
            type: z.enum(LEAD_FIELD_TYPES),
            description: z.string().max(500).optional(),
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
    const seen = new Set<string>();
    data.fields?.forEach((field, index) => {
      if (seen.has(field.name))
        context.addIssue({
          code: 'custom',
          path: ['fields', index, 'name'],
          message: `duplicate field "${field.name}"`,
        });
      seen.add(field.name);
    });
  });

const endDataSchema = z
  .object({
    outcome: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('Label recorded on the run when it ends here, e.g. "converted".'),
  })
  .strict();

export const JOURNEY_CALL_OUTCOMES = [...CALL_OUTCOMES, 'do_not_call', 'cancelled'] as const;

const callDataSchema = z
  .object({
    agentId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("The AI agent placing the call; the campaign's agent when absent."),
    message: template('Opening line or extra instructions for the agent.').optional(),
  })
  .strict();

const whatsappDataSchema = z
  .object({
    templateName: z.string().min(1).max(512).describe('Name of an approved WhatsApp message template.'),
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
    operator: z.string().min(1).max(32).describe("Which operators apply depends on the variable's type."),
    value: z.union([z.string().max(1000), z.number(), z.boolean(), z.array(z.string().max(1000)).max(100)]).optional(),
  })
  .strict();

const handle = z.string().min(1).max(64);

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
    const seen = new Set<string>();
    data.rules.forEach((rule, index) => {
      if (seen.has(rule.handle))
        context.addIssue({
          code: 'custom',
          path: ['rules', index, 'handle'],
          message: `duplicate handle "${rule.handle}"`,
        });
      seen.add(rule.handle);
    });
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
    // Checked again once rendered; a URL may start with a reference, e.g. {{start.fields.callbackUrl}}.
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
    instructions: z.string().min(1).max(2000).describe('What the reviewer should check before deciding.'),
  })
  .strict();

const object = (nodeId: string, description: string, children: VariableDescriptor[]) =>
  descriptor(nodeId, 'object', description, { children });
const referenceTo = (condition: Condition) => `{{${condition.variable}}}`;

export const NODE_TYPE_SPECS: Record<NodeType, NodeTypeSpec> = {
  start: spec({
    type: 'start',
    label: 'Lead enters the journey',
    dataSchema: startDataSchema,
    isWait: false,
    // Named 'start' whatever the node's id: every journey reads its lead as {{start.…}}.
    output: (data) =>
      object(START_VARIABLE, 'The lead that entered the journey.', [
        descriptor('phone', 'string', 'Phone number of the lead, E.164.'),
        descriptor('name', 'string', 'Name of the lead.'),
        leadFieldsDescriptor(data.fields ?? []),
      ]),
    templates: () => [],
  }),
  end: spec({
    type: 'end',
    label: 'End the journey',
    dataSchema: endDataSchema,
    isWait: false,
    output: () => null,
    templates: () => [],
  }),
  call: spec({
    type: 'call',
    label: 'Place a call',
    dataSchema: callDataSchema,
    isWait: false,
    output: (_data, nodeId) =>
      object(nodeId, 'The call placed.', [
        descriptor('outcome', 'enum', 'How the call ended.', { allowedValues: [...JOURNEY_CALL_OUTCOMES] }),
        descriptor('attempts', 'number', 'Dial attempts made.'),
        descriptor('durationMs', 'number', 'Length of the conversation in milliseconds.'),
        descriptor('callId', 'string', 'Id of the call.'),
      ]),
    templates: (data) => (data.message === undefined ? [] : [data.message]),
  }),
  whatsapp: spec({
    type: 'whatsapp',
    label: 'Send a WhatsApp message',
    dataSchema: whatsappDataSchema,
    isWait: false,
    output: (_data, nodeId) =>
      object(nodeId, 'The WhatsApp message sent.', [
        descriptor('messageId', 'string', 'Id of the message.'),
        descriptor('status', 'enum', 'Whether the message was accepted for delivery.', {
          allowedValues: ['sent', 'failed'],
        }),
      ]),
    templates: (data) => [...data.parameters],
  }),
  wait: spec({
    type: 'wait',
    label: 'Wait',
    dataSchema: waitDataSchema,
    isWait: true,
    output: (_data, nodeId) => object(nodeId, 'The wait.', [descriptor('wokeAt', 'datetime', 'When the wait ended.')]),
    templates: () => [],
  }),
  branch: spec({
    type: 'branch',
    label: 'Branch on a condition',
    dataSchema: branchDataSchema,
    isWait: false,
    output: (_data, nodeId) =>
      object(nodeId, 'The branch taken.', [descriptor('matched', 'string', 'Handle of the branch taken.')]),
    // A condition reads its variable exactly as a template would, so it is checked the same way.
    templates: (data) => data.rules.map((rule) => referenceTo(rule.when)),
  }),
  set_variable: spec({
    type: 'set_variable',
    label: 'Set a variable',
    dataSchema: setVariableDataSchema,
    isWait: false,
    output: (data, nodeId) =>
      object(nodeId, 'The variable set.', [descriptor('value', data.valueType, 'The value set.')]),
    templates: (data) => [data.value],
  }),
  webhook: spec({
    type: 'webhook',
    label: 'Call a webhook',
    dataSchema: webhookDataSchema,
    isWait: false,
    output: (_data, nodeId) =>
      object(nodeId, 'The webhook request.', [
        descriptor('status', 'number', 'HTTP status of the response.'),
        descriptor('body', 'object', 'Response body parsed as JSON; any path below it may be read.', { open: true }),
      ]),
    templates: (data) => [
      data.url,
      ...Object.values(data.headers ?? {}),
      ...(data.body === undefined ? [] : [data.body]),
    ],
  }),
  review: spec({
    type: 'review',
    label: 'Human review',
    dataSchema: reviewDataSchema,
    isWait: true,
    output: (_data, nodeId) =>
      object(nodeId, 'The review.', [
        descriptor('decision', 'enum', 'What the reviewer decided.', {
          allowedValues: ['approved', 'rejected', 'skipped'],
        }),
        descriptor('note', 'string', "The reviewer's note."),
        descriptor('decidedBy', 'string', 'Who decided.'),
      ]),
    templates: () => [],
  }),
};

/** Checks each spec against the output type of its own schema, which the registry's `any` would not. */
function spec<S extends z.ZodType>(
  definition: NodeTypeSpec<z.output<S>> & { dataSchema: S },
): NodeTypeSpec<z.output<S>> {
  return definition;
}

/** start.fields: the declared lead fields, open because a lead may carry fields nobody declared. */
export function leadFieldsDescriptor(
  fields: NonNullable<z.output<typeof startDataSchema>['fields']>,
): VariableDescriptor {
  return descriptor('fields', 'object', 'Fields of the lead.', {
    open: true,
    children: fields.map((field) => descriptor(field.name, field.type, field.description ?? '')),
  });
}

export function isNodeType(type: string): type is NodeType {
  return (NODE_TYPES as readonly string[]).includes(type);
}

export type ParsedNodeData =
  | { ok: true; spec: NodeTypeSpec; data: unknown }
  | { ok: false; spec: NodeTypeSpec | null; issues: z.core.$ZodIssue[] };

/** The node's spec and its data parsed by it; `spec: null` for an unknown type. */
export function parseNodeData(node: JourneyNode): ParsedNodeData {
  if (!isNodeType(node.type)) return { ok: false, spec: null, issues: [] };
  const nodeSpec = NODE_TYPE_SPECS[node.type];
  const parsed = nodeSpec.dataSchema.safeParse(node.data);
  return parsed.success
    ? { ok: true, spec: nodeSpec, data: parsed.data }
    : { ok: false, spec: nodeSpec, issues: parsed.error.issues };
}

/** Names of the lead fields the start node requires: a lead or a run without one of them is refused. */
export function requiredStartFields(definition: JourneyDefinition): string[] {
  const start = definition.nodes.find((node) => node.type === 'start');
  const fields = (start?.data.fields ?? []) as Array<{ name: string; required?: boolean }>;
  return fields.filter((field) => field.required).map((field) => field.name);
}

/** The required start fields a lead's fields lack (null counts as absent). */
export function missingStartFields(definition: JourneyDefinition, fields: Record<string, unknown>): string[] {
  return requiredStartFields(definition).filter((name) => fields[name] === undefined || fields[name] === null);
}
