/** A numbered variable exactly as the platform writes it (lib/whatsapp/template-rules.ts checks a body has only these). */
const VARIABLE = /\{\{([1-9]\d*)\}\}/g;

/**
 * The text a template message shows: each {{n}} replaced by the n-th value (1-based). Every variable
 * must have its value: the caller checks the count against the template's variableCount first.
 */
export function renderTemplateBody(body: string, values: readonly string[]): string {
  return body.replace(VARIABLE, (whole, index: string) => values[Number(index) - 1] ?? whole);
}
