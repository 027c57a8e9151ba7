import { VARIABLE_PATH_SOURCE } from './descriptor';
import { renderValue, resolvePath } from './render';

// Rendering a webhook's JSON body: a value goes in as JSON, so that lead data cannot add keys or end the document
// (a name `", "admin": true, "x": "` stays one string). Apart from render.ts, which renders text for every other
// template, because here each reference's place matters: inside a JSON string or where a value stands.

// The reference grammar of render.ts, anchored where a scan stands ('y'); module-private, so never frozen.
const REFERENCE_AT = new RegExp(`\\{\\{\\s*(${VARIABLE_PATH_SOURCE})\\s*(?:\\?\\s*)?\\}\\}`, 'y');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;

/** A body is JSON when its Content-Type header says so (…/json, …+json), or, with none, when it starts with { or [. */
export function isJsonBody(headers: Record<string, string> | undefined, template: string): boolean {
  const type = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  if (type !== undefined) return /^[^;]*[/+]json\s*(;|$)/i.test(type);
  const first = template.trimStart()[0];
  return first === '{' || first === '[';
}

/**
 * Replaces every reference of a JSON template in one pass (linear in the template): inside a JSON string, by the
 * value's text (as renderTemplate gives it) escaped for a JSON string; elsewhere, by the value as JSON (a missing
 * one as null). References are recognised exactly as renderTemplate recognises them.
 */
export function renderJsonTemplate(template: string, variables: Record<string, unknown>): string {
  let rendered = '';
  let copiedTo = 0;
  let inString = false;
  let at = 0;
  while (at < template.length) {
    const code = template.charCodeAt(at);
    if (inString && code === BACKSLASH) {
      at += 2;
      continue;
    }
    if (code === QUOTE) inString = !inString;
    else if (code === OPEN && template.charCodeAt(at + 1) === OPEN && template.charCodeAt(at - 1) !== OPEN) {
      REFERENCE_AT.lastIndex = at;
      const match = REFERENCE_AT.exec(template);
      // A third brace after it makes the text ambiguous: left alone, as renderTemplate leaves it.
      if (match && template.charCodeAt(REFERENCE_AT.lastIndex) !== CLOSE) {
        const value = resolvePath(variables, match[1]!);
        rendered +=
          template.slice(copiedTo, at) +
          (inString ? JSON.stringify(renderValue(value)).slice(1, -1) : JSON.stringify(value ?? null));
        at = copiedTo = REFERENCE_AT.lastIndex;
        continue;
      }
    }
    at++;
  }
  return rendered + template.slice(copiedTo);
}
