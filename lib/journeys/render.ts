import { VARIABLE_PATH_SOURCE } from './descriptor';

// Rendering a template against a run's variables: what journey runs need of templates, apart from the
// graph-wide reference checks in templates.ts, which read every node's data through its schema.

/** `{{n3.outcome?}}` → { path: 'n3.outcome', optional: true, raw: '{{n3.outcome?}}' } */
export interface TemplateReference {
  path: string;
  optional: boolean;
  raw: string;
}

// A third brace on either side makes the text ambiguous, so it is left alone rather than guessed at. The spaces
// around the `?` are one run unless a `?` splits them (`\s*(\?)?\s*` could split a long run of spaces between its two
// halves in every way before failing: quadratic, docs/hostile-input.md).
const REFERENCE = new RegExp(`(?<!\\{)\\{\\{\\s*(${VARIABLE_PATH_SOURCE})\\s*(?:(\\?)\\s*)?\\}\\}(?!\\})`, 'g');

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

/** A value as text in a template: nothing for a missing one, JSON for objects and arrays. */
export function renderValue(value: unknown): string {
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
