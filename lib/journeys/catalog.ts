import { CONDITION_OPERATORS_BY_TYPE } from './conditions';
import {
  leadFieldsDescriptor,
  parseNodeData,
  type JourneyDefinition,
  type JourneyNode,
  type ParsedNodeData,
} from './definition';
import { describedPaths, type VariableDescriptor, type VariableType } from './descriptor';
import type { TemplateReference } from './templates';

/** A variable a node can read; optional when set on some paths to the node only. */
export interface AvailableVariable {
  path: string;
  type: VariableType;
  optional: boolean;
}

export interface VariableCatalog {
  /** start.fields: the lead fields the start node declares. */
  triggerInput: VariableDescriptor;
  /** Nodes with an output, in node order. */
  producers: Array<{ nodeId: string; label: string; output: VariableDescriptor }>;
  /** Per node id, what it can read, sorted by path: object paths and leaf paths alike. */
  availabilityByNode: Record<string, AvailableVariable[]>;
  conditionOperatorsByType: Record<VariableType, string[]>;
}

/**
 * The graph as the analyses see it, tolerant of a broken one: the first node of a duplicated id
 * stands for it, edges with a missing end are left out, and the first start node is the start.
 */
export interface JourneyGraph {
  nodes: Map<string, JourneyNode>;
  parsed: Map<string, ParsedNodeData>;
  startId: string | undefined;
  successors: Map<string, string[]>;
  predecessors: Map<string, string[]>;
  reachable: Set<string>;
}

export function journeyGraph(definition: JourneyDefinition): JourneyGraph {
  const nodes = new Map<string, JourneyNode>();
  for (const node of definition.nodes) if (!nodes.has(node.id)) nodes.set(node.id, node);
  const parsed = new Map([...nodes].map(([id, node]) => [id, parseNodeData(node)]));
  const startId = [...nodes.values()].find((node) => node.type === 'start')?.id;
  const successors = new Map([...nodes.keys()].map((id) => [id, [] as string[]]));
  const predecessors = new Map([...nodes.keys()].map((id) => [id, [] as string[]]));
  for (const edge of definition.edges) {
    if (!nodes.has(edge.source) || !nodes.has(edge.target)) continue;
    successors.get(edge.source)!.push(edge.target);
    predecessors.get(edge.target)!.push(edge.source);
  }
  const reachable = startId === undefined ? new Set<string>() : reachableFrom(startId, successors);
  return { nodes, parsed, startId, successors, predecessors, reachable };
}

export function reachableFrom(origin: string, next: ReadonlyMap<string, string[]>): Set<string> {
  const seen = new Set([origin]);
  const queue = [origin];
  for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
    for (const following of next.get(current) ?? []) {
      if (!seen.has(following)) {
        seen.add(following);
        queue.push(following);
      }
    }
  }
  return seen;
}

/** The node's output, or null: none for invalid data, nor for a start node other than the start. */
function outputOf(graph: JourneyGraph, nodeId: string): VariableDescriptor | null {
  const parsed = graph.parsed.get(nodeId);
  if (!parsed?.ok || (parsed.spec.type === 'start' && nodeId !== graph.startId)) return null;
  return parsed.spec.output(parsed.data, nodeId);
}

export function buildCatalog(definition: JourneyDefinition): VariableCatalog {
  const graph = journeyGraph(definition);
  const outputs = new Map([...graph.nodes.keys()].map((id) => [id, outputOf(graph, id)]));
  const startOutput = graph.startId === undefined ? null : outputs.get(graph.startId);
  const producers = [...outputs].flatMap(([nodeId, output]) =>
    output ? [{ nodeId, label: graph.parsed.get(nodeId)!.spec!.label, output }] : [],
  );
  return {
    triggerInput: startOutput?.children.find((child) => child.name === 'fields') ?? leadFieldsDescriptor([]),
    producers,
    availabilityByNode: availability(graph, outputs),
    // A copy: a caller editing its catalog must not change the operators every validation uses.
    conditionOperatorsByType: Object.fromEntries(
      Object.entries(CONDITION_OPERATORS_BY_TYPE).map(([type, operators]) => [type, [...operators]]),
    ) as Record<VariableType, string[]>,
  };
}

/**
 * Forward dataflow to a fixpoint, over the nodes that ran before (a node's outputs are set
 * together): a node surely follows those on every path to it (intersection over predecessors,
 * starting from "everything" so loops settle), and maybe follows those on some path (union); what
 * the latter produce and the former do not, it reads as optional. Never its own output.
 */
function availability(
  graph: JourneyGraph,
  outputs: Map<string, VariableDescriptor | null>,
): Record<string, AvailableVariable[]> {
  const flowing = [...graph.reachable].filter((id) => id !== graph.startId);
  const surely = new Map<string, Set<string> | 'everything'>(
    [...graph.reachable].map((id) => [id, id === graph.startId ? new Set<string>() : 'everything']),
  );
  const maybe = new Map([...graph.reachable].map((id) => [id, new Set<string>()]));
  for (let changed = true; changed;) {
    changed = false;
    for (const nodeId of flowing) {
      let meet: Set<string> | 'everything' = 'everything';
      const join = new Set<string>();
      for (const predecessor of graph.predecessors.get(nodeId)!) {
        if (!graph.reachable.has(predecessor)) continue;
        const before = surely.get(predecessor)!;
        if (before !== 'everything') meet = intersect(meet, new Set(before).add(predecessor));
        for (const ran of maybe.get(predecessor)!) join.add(ran);
        join.add(predecessor);
      }
      const previous = surely.get(nodeId)!;
      // Both sets only move one way (surely shrinks, maybe grows), so their sizes tell a change.
      if (meet !== 'everything' && (previous === 'everything' || previous.size !== meet.size)) {
        surely.set(nodeId, meet);
        changed = true;
      }
      if (join.size !== maybe.get(nodeId)!.size) {
        maybe.set(nodeId, join);
        changed = true;
      }
    }
  }

  // Sorted once; each node then keeps the entries of the nodes that may have run before it.
  const variables = [...outputs]
    .flatMap(([producer, output]) =>
      (output ? describedPaths(output) : []).map(({ path, descriptor }) => ({ producer, path, type: descriptor.type })),
    )
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const byNode: Record<string, AvailableVariable[]> = {};
  for (const nodeId of graph.nodes.keys()) {
    const ran = maybe.get(nodeId) ?? new Set<string>();
    const sure = surely.get(nodeId);
    byNode[nodeId] = variables
      .filter(({ producer }) => producer !== nodeId && ran.has(producer))
      .map(({ producer, path, type }) => ({ path, type, optional: !(sure instanceof Set && sure.has(producer)) }));
  }
  return byNode;
}

function intersect(current: Set<string> | 'everything', incoming: Set<string>): Set<string> {
  if (current === 'everything') return incoming;
  return new Set([...current].filter((id) => incoming.has(id)));
}

/** Every variable path any node produces, with its descriptor. */
export function variableDescriptors(catalog: VariableCatalog): Map<string, VariableDescriptor> {
  const found = new Map<string, VariableDescriptor>();
  for (const { output } of catalog.producers) {
    for (const { path, descriptor } of describedPaths(output)) if (!found.has(path)) found.set(path, descriptor);
  }
  return found;
}

export type ReferenceStatus = 'ok' | 'unknown' | 'partial';

/**
 * Whether a node with these available variables may read the reference: 'partial' when it may be
 * unset and the reference is not optional. A path the catalog does not list is known only below an
 * open object (and then shares its optional-ness); below anything else it is unknown. Checking many
 * references of one node, pass its variables indexed by path (availableByPath) rather than the list.
 */
export function isReferenceAvailable(
  reference: TemplateReference,
  available: readonly AvailableVariable[] | ReadonlyMap<string, AvailableVariable>,
  descriptors: ReadonlyMap<string, VariableDescriptor>,
): ReferenceStatus {
  const byPath = Array.isArray(available)
    ? availableByPath(available)
    : (available as ReadonlyMap<string, AvailableVariable>);
  const segments = reference.path.split('.');
  for (let length = segments.length; length > 0; length--) {
    const variable = byPath.get(segments.slice(0, length).join('.'));
    if (!variable) continue;
    if (length < segments.length && !descriptors.get(variable.path)?.open) return 'unknown';
    return variable.optional && !reference.optional ? 'partial' : 'ok';
  }
  return 'unknown';
}

export function availableByPath(available: readonly AvailableVariable[]): Map<string, AvailableVariable> {
  return new Map(available.map((variable) => [variable.path, variable]));
}
