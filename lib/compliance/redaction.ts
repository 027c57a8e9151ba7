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
 * O(groups * 19) (docs/hostile-input.md): a group holds at least one digit, so a span of at most 19 digits holds at
 * most 19 groups; only those spans are tried, each checked in constant time from running sums.
 */
function maskCardsInRun(run: string): string {
  const groups = run.split(/([ -])/); // groups at even indexes, separators between them
  const digitGroups = groups.filter((_, index) => index % 2 === 0);
  const luhn = luhnSums(digitGroups);
  const masked: string[] = [];
  let index = 0;
  while (index < digitGroups.length) {
    const end = longestCardSpanEnd(luhn, index);
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

/**
 * Running sums over the digits of a run, for Luhn's check of any span of its groups in constant time: a digit is
 * doubled when its distance from the span's last digit is odd, so by the parity of its index in the run against the
 * last digit's. `doubledEven[k]`: the sum of digits 0..k-1 with those at even indexes doubled (Luhn's way: 2d, less 9
 * above 9), `doubledOdd[k]` the same with those at odd indexes doubled. `groupStart[g]`: the index of group g's first
 * digit.
 */
interface LuhnSums {
  groupStart: Int32Array;
  doubledEven: Int32Array;
  doubledOdd: Int32Array;
}

function luhnSums(digitGroups: readonly string[]): LuhnSums {
  const groupStart = new Int32Array(digitGroups.length + 1);
  digitGroups.forEach((group, index) => (groupStart[index + 1] = groupStart[index]! + group.length));
  const total = groupStart[digitGroups.length]!;
  const doubledEven = new Int32Array(total + 1);
  const doubledOdd = new Int32Array(total + 1);
  let at = 0;
  for (const group of digitGroups)
    for (let index = 0; index < group.length; index++, at++) {
      const digit = group.charCodeAt(index) - 48;
      const doubled = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      doubledEven[at + 1] = doubledEven[at]! + (at % 2 === 0 ? doubled : digit);
      doubledOdd[at + 1] = doubledOdd[at]! + (at % 2 === 1 ? doubled : digit);
    }
  return { groupStart, doubledEven, doubledOdd };
}

/** The end (exclusive) of the longest span of groups from `start` that is a card number, or -1. */
function longestCardSpanEnd({ groupStart, doubledEven, doubledOdd }: LuhnSums, start: number): number {
  const groups = groupStart.length - 1;
  const first = groupStart[start]!;
  let last = start;
  while (last < groups && groupStart[last + 1]! - first <= CARD_MAX_DIGITS) last++;
  for (; last > start && groupStart[last]! - first >= CARD_MIN_DIGITS; last--) {
    const end = groupStart[last]!;
    // The span's last digit (index end - 1) is not doubled; those at the other parity are.
    const sums = (end - 1) % 2 === 0 ? doubledOdd : doubledEven;
    if ((sums[end]! - sums[first]!) % 10 === 0) return last;
  }
  return -1;
}

/**
 * An address as written (`ana.lopez+shop@example.co.uk`) or as a recogniser writes it spoken (`ana at example dot com`).
 * The local part is at most 64 characters (RFC 5321's limit, 4.5.3.1.1): unbounded, every start in a long run of
 * its characters scanned the whole run again, quadratic in the text (docs/hostile-input.md). Of a longer local part
 * (no address), the 64 characters before the `@` are masked.
 */
const EMAIL_LOCAL_MAX = 64;
const EMAIL_LOCAL_CHAR = /^[\p{L}\p{N}._%+-]$/u;
const WORD_CHAR = /^[\p{L}\p{N}]$/u;
/** What follows the `@` of a written address, read where it starts (sticky). */
const EMAIL_DOMAIN = /[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/uy;
/** The ` at ` of a spoken address, and what follows it (sticky). */
const EMAIL_SPOKEN_AT = / at /gi;
const EMAIL_SPOKEN_DOMAIN =
  /[\p{L}\p{N}-]+(?: dot [\p{L}\p{N}-]+)* dot (?:com|net|org|edu|gov|io|co|uk|us|es|mx|de|fr|info|biz)(?![\p{L}\p{N}])/iuy;

/**
 * Addresses masked, as `text.replace(pattern, label)` would with the pattern `<local part>{1,64}<separator><domain>`
 * (written: `/[\p{L}\p{N}._%+-]{1,64}@<EMAIL_DOMAIN>/gu`; spoken: the same local part, not after a letter or a digit,
 * then ` at ` and EMAIL_SPOKEN_DOMAIN), in linear time: from each separator in turn, its local part is read backwards
 * (at most 64 characters, none before the end of the last address masked) and its domain forwards. A local part
 * stops at the separator before; a domain at the next `@`, or at the next ` at ` (a spoken domain's words alternate
 * with `dot`, so one that reads on past an ` at ` is no longer one when read from that ` at `).
 */
function maskEmails(
  text: string,
  separator: RegExp,
  domain: RegExp,
  startOk: (text: string, start: number) => boolean,
): string {
  const parts: string[] = [];
  let done = 0;
  for (separator.lastIndex = 0; ;) {
    const found = separator.exec(text);
    if (!found) break;
    const at = found.index;
    separator.lastIndex = at + 1;
    const start = localPartStart(text, at, done, startOk);
    if (start === at) continue;
    domain.lastIndex = at + found[0].length;
    if (!domain.test(text)) continue;
    parts.push(text.slice(done, start), REDACTION_LABELS.email_address);
    done = separator.lastIndex = domain.lastIndex;
  }
  parts.push(text.slice(done));
  return parts.join('');
}

const EMAIL_WRITTEN_AT = /@/g;

/**
 * Where the local part before `end` starts: the earliest place, back over at most 64 of its characters (code points)
 * and not before `floor`, where a local part may start (`startOk`); `end` when none.
 */
function localPartStart(
  text: string,
  end: number,
  floor: number,
  startOk: (text: string, start: number) => boolean,
): number {
  let earliest = end;
  let start = end;
  for (let count = 0; count < EMAIL_LOCAL_MAX && start > floor; count++) {
    const from = codePointStart(text, start, floor);
    if (!EMAIL_LOCAL_CHAR.test(text.slice(from, start))) break;
    start = from;
    if (startOk(text, start)) earliest = start;
  }
  return earliest;
}

/** Where the code point that ends at `end` starts (two code units for a surrogate pair), not before `floor`. */
function codePointStart(text: string, end: number, floor: number): number {
  const single = end - 1;
  const pair = single > floor && /[\udc00-\udfff]/.test(text[single]!) && /[\ud800-\udbff]/.test(text[single - 1]!);
  return pair ? single - 1 : single;
}

/** A spoken address's local part starts where no letter or digit is before it (the pattern's lookbehind). */
const notAfterWordChar = (text: string, start: number) =>
  start === 0 || !WORD_CHAR.test(text.slice(codePointStart(text, start, 0), start));

/** An IBAN: country, check digits, then 11 to 30 letters or digits, in groups of four or not; mod-97 checked. */
const IBAN = /(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?(?![\p{L}\p{N}])/gu;

/**
 * A US Social Security number: 3, 2 and 4 digits, with the same dash or space between them or none, outside the
 * ranges never issued (area 000, 666 or 900-999, group 00, serial 0000).
 */
const US_SSN = /(?<![\p{L}\p{N}])(?!000|666|9\d\d)\d{3}([- ]?)(?!00)\d{2}\1(?!0000)\d{4}(?![\p{L}\p{N}])/gu;

const RULES: Record<RedactionRule, (text: string) => string> = {
  email_address: (text) =>
    maskEmails(
      maskEmails(text, EMAIL_WRITTEN_AT, EMAIL_DOMAIN, () => true),
      EMAIL_SPOKEN_AT,
      EMAIL_SPOKEN_DOMAIN,
      notAfterWordChar,
    ),
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
