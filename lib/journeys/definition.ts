import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { CALL_OUTCOMES } from '../calls/call-outcomes';
import { descriptor, type VariableDescriptor } from './descriptor';
import {
  NODE_TYPES,
  nodeDataSchema,
  safeParseNodeData,
  type Condition,
  type NodeData,
  type NodeType,
} from './node-data';

export {
  isNodeType,
  LEAD_FIELD_TYPES,
  NODE_TYPES,
  nodeDataSchema,
  safeParseNodeData,
  type BranchData,
  type Condition,
  type NodeData,
  type NodeType,
} from './node-data';

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
  .check(atMostCodePoints(64))
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
          .check(atMostCodePoints(64))
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
        id: z.string().min(1).check(atMostCodePoints(200)),
        source: z.string().min(1).check(atMostCodePoints(64)),
        target: z.string().min(1).check(atMostCodePoints(64)),
        sourceHandle: z
          .string()
          .min(1)
          .check(atMostCodePoints(64))
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

/** The start node's output, whatever its id; no other node may take this id. */
export const START_VARIABLE = 'start';

export const JOURNEY_CALL_OUTCOMES = [...CALL_OUTCOMES, 'do_not_call', 'cancelled'] as const;

const object = (nodeId: string, description: string, children: VariableDescriptor[]) =>
  descriptor(nodeId, 'object', description, { children });
const referenceTo = (condition: Condition) => `{{${condition.variable}}}`;

export const NODE_TYPE_SPECS: Record<NodeType, NodeTypeSpec> = {
  start: spec({
    type: 'start',
    label: 'Lead enters the journey',
    dataSchema: nodeDataSchema('start'),
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
    dataSchema: nodeDataSchema('end'),
    isWait: false,
    output: () => null,
    templates: () => [],
  }),
  call: spec({
    type: 'call',
    label: 'Place a call',
    dataSchema: nodeDataSchema('call'),
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
    dataSchema: nodeDataSchema('whatsapp'),
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
    dataSchema: nodeDataSchema('wait'),
    isWait: true,
    output: (_data, nodeId) => object(nodeId, 'The wait.', [descriptor('wokeAt', 'datetime', 'When the wait ended.')]),
    templates: () => [],
  }),
  branch: spec({
    type: 'branch',
    label: 'Branch on a condition',
    dataSchema: nodeDataSchema('branch'),
    isWait: false,
    output: (_data, nodeId) =>
      object(nodeId, 'The branch taken.', [descriptor('matched', 'string', 'Handle of the branch taken.')]),
    // A condition reads its variable exactly as a template would, so it is checked the same way.
    templates: (data) => data.rules.map((rule) => referenceTo(rule.when)),
  }),
  set_variable: spec({
    type: 'set_variable',
    label: 'Set a variable',
    dataSchema: nodeDataSchema('set_variable'),
    isWait: false,
    output: (data, nodeId) =>
      object(nodeId, 'The variable set.', [descriptor('value', data.valueType, 'The value set.')]),
    templates: (data) => [data.value],
  }),
  webhook: spec({
    type: 'webhook',
    label: 'Call a webhook',
    dataSchema: nodeDataSchema('webhook'),
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
    dataSchema: nodeDataSchema('review'),
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
export function leadFieldsDescriptor(fields: NonNullable<NodeData<'start'>['fields']>): VariableDescriptor {
  return descriptor('fields', 'object', 'Fields of the lead.', {
    open: true,
    children: fields.map((field) => descriptor(field.name, field.type, field.description ?? '')),
  });
}

export type ParsedNodeData =
  | { ok: true; spec: NodeTypeSpec; data: unknown }
  | { ok: false; spec: NodeTypeSpec | null; issues: z.core.$ZodIssue[] };

/** The node's spec and its data parsed by it; `spec: null` for an unknown type. */
export function parseNodeData(node: JourneyNode): ParsedNodeData {
  const parsed = safeParseNodeData(node);
  if (parsed.ok) return { ok: true, spec: NODE_TYPE_SPECS[parsed.type], data: parsed.data };
  return { ok: false, spec: parsed.type && NODE_TYPE_SPECS[parsed.type], issues: parsed.issues };
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
