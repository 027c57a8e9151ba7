/*
 * The product's one placeholder filler for what an agent says (script lines, openings, closings, a test call's lines):
 * `{{name}}` and `{{field}}` from the lead. Linear in the text (docs/hostile-input.md). Journeys render their own
 * templates with escaping (lib/journeys/render.ts).
 */

/** What a line is filled from: the lead's name and fields. */
export interface PlaceholderLead {
  name: string | null;
  fields: Record<string, unknown>;
}

/** The lead's field `name`, matched exactly first, then without regard to case. */
export function fieldValue(name: string, fields: Record<string, unknown>): unknown {
  if (Object.hasOwn(fields, name)) return fields[name];
  const key = Object.keys(fields).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : fields[key];
}

/**
 * {{name}} is the lead's name and {{x}} the lead's field x (spaces inside the braces allowed); a
 * variable the lead has no value for says nothing, and the spaces it leaves are tidied.
 */
export function filled(text: string, lead: PlaceholderLead): string {
  return text
    .replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g, (_match, name: string) => {
      const value = name === 'name' ? lead.name : fieldValue(name, lead.fields);
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
    })
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ ([,.!?;:])/g, '$1')
    .trim();
}
