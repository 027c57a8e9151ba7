/** The platform's limits of a template (Meta's message templates). */
export const TEMPLATE_LIMITS = { nameLength: 512, bodyLength: 1024 } as const;

/** A template name: lowercase letters, digits and underscores. */
export const TEMPLATE_NAME = /^[a-z0-9_]+$/;

/** A language code of the platform: en, en_US, pt_BR, fil, ... */
export const TEMPLATE_LANGUAGE = /^[a-z]{2,3}(_[A-Z]{2})?$/;

/** A numbered variable exactly as the platform writes it: {{1}}, {{2}}, ... (no spaces, no leading zero). */
const VARIABLE = /\{\{([1-9]\d*)\}\}/g;

/**
 * A body's numbered variables: how many ({{1}}..{{n}}: n) and what is wrong with them, in words. Every
 * number from 1 to n must be used (each as often as wanted, in any order); any other {{...}} (spaces,
 * a leading zero, a name), or a stray {{ or }}, is a problem.
 */
export function templateVariables(body: string): { variableCount: number; problems: string[] } {
  const numbers = new Set([...body.matchAll(VARIABLE)].map((match) => Number(match[1])));
  const problems: string[] = [];
  const rest = body.replace(VARIABLE, '');
  if (rest.includes('{{') || rest.includes('}}'))
    problems.push('variables are written {{1}}, {{2}}, ...: no other {{...}}, and no stray {{ or }}');
  const variableCount = numbers.size === 0 ? 0 : Math.max(...numbers);
  const missing = Array.from({ length: variableCount }, (_, index) => index + 1).filter((n) => !numbers.has(n));
  if (missing.length) problems.push(`variables must be numbered from 1 without gaps: missing {{${missing.join('}}, {{')}}}`);
  return { variableCount, problems };
}

/**
 * The text a template message shows: each {{n}} replaced by the n-th value (1-based). Every variable
 * must have its value: the caller checks the count against the template's variableCount first.
 */
export function renderTemplateBody(body: string, values: readonly string[]): string {
  return body.replace(VARIABLE, (whole, index: string) => values[Number(index) - 1] ?? whole);
}
