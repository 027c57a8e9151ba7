import { VARIABLE_PATH_SOURCE } from './descriptor';
import { parseNodeData, type JourneyDefinition } from './definition';

/** `{{n3.outcome?}}` → { path: 'n3.outcome', optional: true, raw: '{{n3.outcome?}}' } */
export interface TemplateReference {
  path: string;
  optional: boolean;
  raw: string;
}

// A third brace on either side makes the text ambiguous, so it is left alone rather than guessed at.
const REFERENCE = new RegExp(`(?<!\\{)\\{\\{\\s*(${VARIABLE_PATH_SOURCE})\\s*(\\?)?\\s*\\}\\}(?!\\})`, 'g');

export function parseReferences(template: string): TemplateReference[] {
  return [...template.matchAll(REFERENCE)].map((match) => ({
    path: match[1]!,
    optional: match[2] === '?',
    raw: match[0],
  }));
}

/**
 * Replaces every reference by its value in the run's variable tree; objects and arrays as JSON. A
 * missing value renders as '' whether or not the reference is optional: validateJourney already
 * refuses non-optional references that could be missing, so a run never fails on one.
 */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return template.replace(REFERENCE, (_raw, path: string) => renderValue(resolvePath(variables, path)));
}

function renderValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value as string | number | boolean | bigint);
}

/** The value at a dotted path, or undefined. Only own properties of plain objects: `constructor` is not a lead field. */
export function resolvePath(variables: Record<string, unknown>, path: string): unknown {
  let current: unknown = variables;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current) || !Object.hasOwn(current, segment))
      return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** Every reference in the graph, branch conditions included. */
export function referencesInGraph(definition: JourneyDefinition): TemplateReference[] {
  return definition.nodes.flatMap((node) => nodeTemplates(node.data, parseNodeData(node)).flatMap(parseReferences));
}

function nodeTemplates(rawData: unknown, parsed: ReturnType<typeof parseNodeData>): string[] {
  if (parsed.ok) return parsed.spec.templates(parsed.data);
  // Invalid data has no templates() to ask; any string in it may still be meant as one.
  return stringsIn(rawData);
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap(stringsIn);
}

const LEAD_FIELD_PREFIX = 'start.fields.';

/** Names X of every {{start.fields.X…}} reference anywhere in the graph. */
export function fieldsReadByGraph(definition: JourneyDefinition): Set<string> {
  return leadFieldsReadBy(referencesInGraph(definition));
}

function leadFieldsReadBy(references: TemplateReference[]): Set<string> {
  return new Set(
    references
      .filter((reference) => reference.path.startsWith(LEAD_FIELD_PREFIX))
      .map((reference) => reference.path.slice(LEAD_FIELD_PREFIX.length).split('.')[0]!),
  );
}

/**
 * Lead field names the graph never reads, sorted: what a lead carries in vain. None when a template
 * reads {{start}} or {{start.fields}} whole, since that reads every field.
 */
export function undeclaredVariables(definition: JourneyDefinition, leadFields: Record<string, unknown>): string[] {
  const references = referencesInGraph(definition);
  if (references.some((reference) => reference.path === 'start' || reference.path === 'start.fields')) return [];
  const read = leadFieldsReadBy(references);
  return Object.keys(leadFields)
    .filter((name) => !read.has(name))
    .sort();
}
