/**
 * Transcript redaction (docs/features/compliance.md#redaction): what a workspace's rules mask in every transcript turn
 * before it is stored. Pure: no I/O. Each rule finds its pattern, checks it (a card number's Luhn digit, an IBAN's
 * mod-97 check, an SSN's allocated ranges) and replaces it by its label in square brackets, so that a reader sees
 * what was said without the value. Rules run in the order of REDACTION_RULES; a label holds no digit or `@`, so no
 * later rule matches inside one.
 */

/** The rules a workspace turns on, in the order they run. */
export const REDACTION_RULES = ['email_address', 'iban', 'card_number', 'us_ssn'] as const;
export type RedactionRule = (typeof REDACTION_RULES)[number];

/** What replaces a value found by each rule. */
export const REDACTION_LABELS: Record<RedactionRule, string> = {
  email_address: '[email address]',
  iban: '[IBAN]',
  card_number: '[card number]',
  us_ssn: '[SSN]',
};

export interface RedactionSettings {
  /** The rules on; empty: the text is stored as said. */
  redactions: readonly RedactionRule[];
}

/** The Luhn check digit test (ISO/IEC 7812) of a string of digits. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616's check: the country and check digits moved to the end, letters as 10..35, the number mod 97 is 1. */
export function passesIbanCheck(iban: string): boolean {
  const compact = iban.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? char.charCodeAt(0) - 55 : char.charCodeAt(0) - 48;
    remainder = (remainder * (value > 9 ? 100 : 10) + value) % 97;
  }
  return remainder === 1;
}

/** 13 to 19 digits: the lengths of payment card numbers (ISO/IEC 7812). */
const CARD_MIN_DIGITS = 13;
const CARD_MAX_DIGITS = 19;

/** Runs of digits joined by single spaces or dashes ("4111 1111-1111 1111"), not touching a letter or another digit. */
const DIGIT_RUN = /(?<![\p{L}\p{N}])\d+(?:[ -]\d+)*(?![\p{L}\p{N}])/gu;

/**
 * Card numbers in a run of digit groups: the longest span of whole groups, leftmost first, holding 13 to 19 digits
 * that pass Luhn's check, so that a card number said with its expiry or a reference next to it is still found
 * ("4111 1111 1111 1111 12 27"). A span failing the check is left alone (an order number, a tracking code).
 */
function maskCardsInRun(run: string): string {
  const groups = run.split(/([ -])/); // groups at even indexes, separators between them
  const digitGroups = groups.filter((_, index) => index % 2 === 0);
  const masked: string[] = [];
  let index = 0;
  while (index < digitGroups.length) {
    let end = -1;
    for (let last = digitGroups.length; last > index; last--) {
      const digits = digitGroups.slice(index, last).join('');
      if (digits.length >= CARD_MIN_DIGITS && digits.length <= CARD_MAX_DIGITS && passesLuhn(digits)) {
        end = last;
        break;
      }
    }
    if (end === -1) {
      masked.push(digitGroups[index]!, index + 1 < digitGroups.length ? groups[index * 2 + 1]! : '');
      index += 1;
    } else {
      masked.push(REDACTION_LABELS.card_number, end < digitGroups.length ? groups[end * 2 - 1]! : '');
      index = end;
    }
  }
  return masked.join('');
}

/** An address as written (`ana.lopez+shop@example.co.uk`) or as a recogniser writes it spoken (`ana at example dot com`). */
const EMAIL_WRITTEN = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
const EMAIL_SPOKEN =
  /(?<![\p{L}\p{N}])[\p{L}\p{N}._%+-]+ at [\p{L}\p{N}-]+(?: dot [\p{L}\p{N}-]+)* dot (?:com|net|org|edu|gov|io|co|uk|us|es|mx|de|fr|info|biz)(?![\p{L}\p{N}])/giu;

/** An IBAN: country, check digits, then 11 to 30 letters or digits, in groups of four or not; mod-97 checked. */
const IBAN = /(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?(?![\p{L}\p{N}])/gu;

/**
 * A US Social Security number: 3, 2 and 4 digits, with the same dash or space between them or none, outside the
 * ranges never issued (area 000, 666 or 900-999, group 00, serial 0000).
 */
const US_SSN = /(?<![\p{L}\p{N}])(?!000|666|9\d\d)\d{3}([- ]?)(?!00)\d{2}\1(?!0000)\d{4}(?![\p{L}\p{N}])/gu;

const RULES: Record<RedactionRule, (text: string) => string> = {
  email_address: (text) =>
    text.replace(EMAIL_WRITTEN, REDACTION_LABELS.email_address).replace(EMAIL_SPOKEN, REDACTION_LABELS.email_address),
  iban: (text) => text.replace(IBAN, (found) => (passesIbanCheck(found) ? REDACTION_LABELS.iban : found)),
  card_number: (text) => text.replace(DIGIT_RUN, maskCardsInRun),
  us_ssn: (text) => text.replace(US_SSN, REDACTION_LABELS.us_ssn),
};

/** The text with every value the rules on find masked by its label. */
export function redactText(text: string, settings: RedactionSettings): string {
  let redacted = text;
  for (const rule of REDACTION_RULES) if (settings.redactions.includes(rule)) redacted = RULES[rule](redacted);
  return redacted;
}

/** Every string within a value (a tool's arguments) redacted. */
function redactValue(value: unknown, settings: RedactionSettings): unknown {
  if (typeof value === 'string') return redactText(value, settings);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, settings));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, settings)]));
  return value;
}

/**
 * THE ONE FUNCTION every transcript write goes through (docs/features/compliance.md#redaction): the turns with their
 * text redacted, and a tool turn's arguments and result too (a model may pass a card number to a tool). The same
 * turns when no rule is on.
 */
export function redactTurns<Turn extends { text: string }>(
  turns: readonly Turn[],
  settings: RedactionSettings,
): Turn[] {
  if (settings.redactions.length === 0) return [...turns];
  return turns.map((turn) => {
    const redacted: Turn = { ...turn, text: redactText(turn.text, settings) };
    const tool = (turn as { tool?: { arguments: unknown; result: string } }).tool;
    if (tool)
      Object.assign(redacted, {
        tool: { ...tool, arguments: redactValue(tool.arguments, settings), result: redactText(tool.result, settings) },
      });
    return redacted;
  });
}
