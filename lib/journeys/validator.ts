import type { z } from 'zod';
import { stronglyConnectedComponents } from '../strongly-connected-components';
import {
  availableByPath,
  buildCatalog,
  isReferenceAvailable,
  journeyGraph,
  reachableFrom,
  variableDescriptors,
  type JourneyGraph,
  type VariableCatalog,
} from './catalog';
import { conditionPath, conditionProblem } from './conditions';
import {
  isNodeType,
  NODE_TYPE_SPECS,
  parseNodeData,
  START_VARIABLE,
  type BranchData,
  type JourneyDefinition,
  type JourneyEdge,
} from './definition';
import type { VariableDescriptor } from './descriptor';
import { parseReferences, type TemplateReference } from './templates';

/**
 * Every problem of the graph as a message naming the node or edge concerned; [] when it may run.
 * A broken structure (duplicate node ids, no single start) skips the checks that would only repeat it.
 */
export function validateJourney(definition: JourneyDefinition): string[] {
  const graph = journeyGraph(definition);
  const catalog = buildCatalog(definition);
  const descriptors = variableDescriptors(catalog);
  const problems = [
    ...nodeProblems(definition),
    ...edgeProblems(definition, graph),
    ...startAndEndProblems(definition),
    ...outgoingEdgeProblems(definition, graph),
    ...conditionProblems(graph, descriptors),
  ];
  if (graph.nodes.size !== definition.nodes.length) return problems;
  const singleStart = definition.nodes.filter((node) => node.type === 'start').length === 1;
  problems.push(...reachabilityProblems(graph, singleStart), ...cycleProblems(graph));
  if (singleStart) problems.push(...referenceProblems(graph, catalog, descriptors));
  return problems;
}

const list = (ids: string[]) => ids.map((id) => `"${id}"`).join(', ');

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function nodeProblems(definition: JourneyDefinition): string[] {
  const problems: string[] = [];
  for (const [id, count] of countBy(definition.nodes, (node) => node.id))
    if (count > 1) problems.push(`node "${id}": id used by ${count} nodes`);
  for (const node of definition.nodes) {
    if (node.id === START_VARIABLE && node.type !== 'start')
      problems.push(`node "${node.id}": only the start node may have the id "${START_VARIABLE}"`);
    const parsed = parseNodeData(node);
    if (!parsed.spec) problems.push(`node "${node.id}": unknown node type "${node.type}"`);
    else if (!parsed.ok)
      problems.push(
        ...parsed.issues.map((issue) => `node "${node.id}" (${node.type}): ${issuePath(issue)}: ${issue.message}`),
      );
    else if (node.type === 'webhook' && !WEBHOOK_URL_START.test((parsed.data as { url: string }).url))
      problems.push(`node "${node.id}" (webhook): data.url: ${WEBHOOK_URL_RULE}`);
  }
  return problems;
}

/**
 * A webhook's scheme and host are the journey's own, never a lead's: a reference there would let lead data choose
 * what the worker reaches (docs/egress.md). A literal scheme, then a literal authority up to the path, query,
 * fragment or end; references stay allowed after it (https://crm.example.com/leads/{{start.fields.crmId}}). Checked
 * when a definition is saved or published, not in the node's schema: the runs in flight parse their nodes again.
 */
const WEBHOOK_URL_START = /^https?:\/\/[^/?#{}\s]+(?:[/?#]|$)/i;
const WEBHOOK_URL_RULE =
  'must start with http:// or https:// and a host written out, without {{references}} (a reference may go in the path or query)';

function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.reduce<string>(
    (path, key) => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${String(key)}`),
    'data',
  );
}

function edgeProblems(definition: JourneyDefinition, graph: JourneyGraph): string[] {
  const problems: string[] = [];
  for (const [id, count] of countBy(definition.edges, (edge) => edge.id))
    if (count > 1) problems.push(`edge "${id}": id used by ${count} edges`);
  for (const edge of definition.edges) {
    if (!graph.nodes.has(edge.source)) problems.push(`edge "${edge.id}": source "${edge.source}" is not a node`);
    if (!graph.nodes.has(edge.target)) problems.push(`edge "${edge.id}": target "${edge.target}" is not a node`);
  }
  return problems;
}

function startAndEndProblems(definition: JourneyDefinition): string[] {
  const problems: string[] = [];
  const starts = definition.nodes.filter((node) => node.type === 'start');
  if (starts.length === 0) problems.push('the journey has no start node');
  if (starts.length > 1)
    problems.push(
      `the journey has ${starts.length} start nodes (${list(starts.map((node) => node.id))}); it needs exactly one`,
    );
  for (const start of starts) {
    const incoming = definition.edges.filter((edge) => edge.target === start.id);
    if (incoming.length > 0)
      problems.push(
        `node "${start.id}": a start node cannot have incoming edges (${list(incoming.map((edge) => edge.id))})`,
      );
  }
  const ends = definition.nodes.filter((node) => node.type === 'end');
  if (ends.length === 0) problems.push('the journey has no end node');
  for (const end of ends) {
    const outgoing = definition.edges.filter((edge) => edge.source === end.id);
    if (outgoing.length > 0)
      problems.push(
        `node "${end.id}": an end node cannot have outgoing edges (${list(outgoing.map((edge) => edge.id))})`,
      );
  }
  return problems;
}

/** A branch leaves by one edge per handle; any other node (end aside, checked above) by at most one. */
function outgoingEdgeProblems(definition: JourneyDefinition, graph: JourneyGraph): string[] {
  const problems: string[] = [];
  for (const [nodeId, node] of graph.nodes) {
    if (node.type === 'end') continue;
    const outgoing = definition.edges.filter((edge) => edge.source === nodeId && graph.nodes.has(edge.target));
    if (node.type !== 'branch') {
      if (outgoing.length > 1)
        problems.push(
          `node "${nodeId}" has ${outgoing.length} outgoing edges (${list(outgoing.map((edge) => edge.id))}); only a branch node may have more than one`,
        );
      continue;
    }
    const parsed = graph.parsed.get(nodeId)!;
    if (parsed.ok) problems.push(...branchEdgeProblems(nodeId, parsed.data as BranchData, outgoing));
  }
  return problems;
}

function branchEdgeProblems(nodeId: string, data: BranchData, outgoing: JourneyEdge[]): string[] {
  const problems: string[] = [];
  const handles = [...data.rules.map((rule) => rule.handle), data.defaultHandle];
  for (const edge of outgoing) {
    if (edge.sourceHandle === undefined)
      problems.push(`edge "${edge.id}": leaves branch node "${nodeId}" without a handle; use one of ${list(handles)}`);
    else if (!handles.includes(edge.sourceHandle))
      problems.push(`edge "${edge.id}": "${edge.sourceHandle}" is not a handle of branch node "${nodeId}"`);
  }
  for (const handle of handles) {
    const edges = outgoing.filter((edge) => edge.sourceHandle === handle);
    if (edges.length === 0) problems.push(`node "${nodeId}": handle "${handle}" has no outgoing edge`);
    if (edges.length > 1)
      problems.push(
        `node "${nodeId}": handle "${handle}" has ${edges.length} outgoing edges (${list(edges.map((edge) => edge.id))})`,
      );
  }
  return problems;
}

/** Operators and values against the type of the variable tested, where the catalog knows it. */
function conditionProblems(graph: JourneyGraph, descriptors: ReadonlyMap<string, VariableDescriptor>): string[] {
  const problems: string[] = [];
  for (const [nodeId, parsed] of graph.parsed) {
    if (!parsed.ok || parsed.spec.type !== 'branch') continue;
    for (const rule of (parsed.data as BranchData).rules) {
      const problem = conditionProblem(rule.when, descriptors.get(conditionPath(rule.when)));
      if (problem) problems.push(`node "${nodeId}": rule "${rule.handle}": ${problem}`);
    }
  }
  return problems;
}

function reachabilityProblems(graph: JourneyGraph, singleStart: boolean): string[] {
  const problems: string[] = [];
  const ends = [...graph.nodes.values()].filter((node) => node.type === 'end').map((node) => node.id);
  const reachingAnEnd = new Set(ends.flatMap((id) => [...reachableFrom(id, graph.predecessors)]));
  for (const nodeId of graph.nodes.keys()) {
    // An unreachable node is reported as such only: whatever follows it is moot until it is connected.
    if (singleStart && !graph.reachable.has(nodeId))
      problems.push(`node "${nodeId}" is not reachable from the start node`);
    else if (ends.length > 0 && !reachingAnEnd.has(nodeId)) problems.push(`node "${nodeId}" cannot reach an end node`);
  }
  return problems;
}

/**
 * A cycle must pass a wait or review node, or a run would loop without ever pausing: the graph
 * without them must be acyclic. One cycle is named per strongly connected component.
 */
function cycleProblems(graph: JourneyGraph): string[] {
  const waits = (id: string) => {
    const type = graph.nodes.get(id)!.type;
    return isNodeType(type) && NODE_TYPE_SPECS[type].isWait;
  };
  const successors = new Map(
    [...graph.successors]
      .filter(([id]) => !waits(id))
      .map(([id, next]) => [id, next.filter((target) => !waits(target))]),
  );
  return stronglyConnectedComponents(successors)
    .filter((component) => component.length > 1 || successors.get(component[0]!)!.includes(component[0]!))
    .map((component) => `cycle ${cycleThrough(component, successors).join(' → ')} has no wait node`);
}

/** The shortest cycle from the component's first node back to itself, e.g. [n2, n3, n2]. */
function cycleThrough(component: string[], successors: Map<string, string[]>): string[] {
  const first = component[0]!;
  const members = new Set(component);
  const cameFrom = new Map<string, string>();
  const queue = [first];
  for (let current = queue.shift(); current !== undefined; current = queue.shift()) {
    for (const next of successors.get(current)!) {
      if (next === first) return [...pathTo(current, cameFrom, first), first];
      if (members.has(next) && !cameFrom.has(next)) {
        cameFrom.set(next, current);
        queue.push(next);
      }
    }
  }
  return [first, first];
}

function pathTo(id: string, cameFrom: Map<string, string>, origin: string): string[] {
  const path = [id];
  while (path[0] !== origin) path.unshift(cameFrom.get(path[0]!)!);
  return path;
}

function referenceProblems(
  graph: JourneyGraph,
  catalog: VariableCatalog,
  descriptors: ReadonlyMap<string, VariableDescriptor>,
): string[] {
  // Outputs of nodes whose data or type is wrong are unknown; reading them is reported on those nodes.
  const unknownOutputs = new Set(
    [...graph.parsed]
      .filter(([, parsed]) => !parsed.ok)
      .map(([id, parsed]) => (parsed.spec?.type === 'start' ? START_VARIABLE : id)),
  );
  const problems = new Set<string>();
  for (const [nodeId, parsed] of graph.parsed) {
    if (!parsed.ok || !graph.reachable.has(nodeId)) continue;
    const available = availableByPath(catalog.availabilityByNode[nodeId]!);
    for (const reference of parsed.spec.templates(parsed.data).flatMap(parseReferences)) {
      const status = isReferenceAvailable(reference, available, descriptors);
      if (status === 'unknown' && !unknownOutputs.has(reference.path.split('.')[0]!)) {
        problems.add(`node "${nodeId}": ${shown(reference)} is not produced by any node before it`);
      }
      if (status === 'partial') {
        problems.add(
          `node "${nodeId}": ${shown(reference)} is not set on every path to this node; write {{${reference.path}?}} to read it where set`,
        );
      }
    }
  }
  return [...problems];
}

const shown = (reference: TemplateReference) => `{{${reference.path}${reference.optional ? '?' : ''}}}`;
