/**
 * What a new WhatsApp message template must be, as Meta's WhatsApp Business Platform states it
 * (docs/features/whatsapp/senders-templates.md, "Templates"): a name of
 * lowercase letters, digits and underscores; a language code such as en or en_US; a body of 1 to 1024 characters whose
 * variables are numbered {{1}}, {{2}}, ... {{n}}. (lib/whatsapp/template-body.ts fills a stored body's variables.)
 */
export const TEMPLATE_LIMITS = { nameLength: 512, bodyLength: 1024 } as const;

export const TEMPLATE_NAME = /^[a-z0-9_]+$/;

/** A language code of the platform: ISO 639 letters with an optional region (en, en_US, pt_BR, fil). */
export const TEMPLATE_LANGUAGE = /^[a-z]{2,3}(_[A-Z]{2})?$/;

/** Anything between double braces: what a variable was meant to be. */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const NUMBERED = /^[1-9]\d{0,2}$/;

/**
 * A body's variable count, or the problems that refuse it: every {{...}} must be a number written
 * without spaces or leading zeros, and the numbers used must be exactly 1..n (each may be used more than
 * once, in any order). A stray {{ or }} outside a variable is refused too.
 */
export function checkTemplateBody(body: string): { variableCount: number; problems: string[] } {
  const problems: string[] = [];
  const numbers = new Set<number>();
  for (const [, inner] of body.matchAll(PLACEHOLDER)) {
    if (NUMBERED.test(inner!)) numbers.add(Number(inner));
    else problems.push(`{{${inner}}} is not a numbered variable such as {{1}}`);
  }
  const rest = body.replace(PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}')) problems.push('a {{ or }} that is not part of a variable {{n}}');
  const missing = Array.from({ length: Math.max(0, ...numbers) }, (_, index) => index + 1).filter(
    (number) => !numbers.has(number),
  );
  if (missing.length)
    problems.push(
      `variables are numbered from {{1}} without gaps: ${missing.map((number) => `{{${number}}}`).join(', ')} missing`,
    );
  return { variableCount: numbers.size, problems };
}
