import { parseNodeData, type JourneyDefinition } from './definition';
import { parseReferences, type TemplateReference } from './render';

export * from './render';

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
