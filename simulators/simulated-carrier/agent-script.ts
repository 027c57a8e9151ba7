/*
 * How the simulated carrier reads the agent's script it was dialed with, written from the page of simulated
 * conversations (docs/features/call-intelligence.md, "Simulated conversations"): the variables of a line, which question
 * asks for which extraction field, a date as a person says it. The product holds the same rules (lib/lead-placeholders.ts,
 * lib/call-intelligence/field-questions.ts and spoken-values.ts, which its extractor reads transcripts back with), and
 * the two copies agreeing is intended: the carrier is a stranger to the product, so when the product's reading drifts
 * from the page the extraction tests, which read back what this carrier said, fail instead of both sides drifting
 * together. Change the page and both sides, never one.
 */

export interface ScriptLead {
  name: string | null;
  fields: Record<string, unknown>;
}

/** The lead's field `name`: its exact name, else the first field of that name ignoring case. */
export function fieldValue(name: string, fields: Record<string, unknown>): unknown {
  if (Object.hasOwn(fields, name)) return fields[name];
  const lower = name.toLowerCase();
  const key = Object.keys(fields).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : fields[key];
}

/**
 * The line with its variables filled: `{{name}}` the lead's name, `{{x}}` (spaces inside the braces allowed) the lead's
 * field x; a variable without a value (text, number or boolean) says nothing, and the runs of spaces and the space
 * before punctuation it leaves are tidied (`Hi {{name}},` with no name reads `Hi,`). Linear in the line: the name
 * holds no space, so the spaces around it match one way only.
 */
export function filled(line: string, lead: ScriptLead): string {
  return line
    .replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g, (_variable, name: string) => {
      const value = name === 'name' ? lead.name : fieldValue(name, lead.fields);
      return ['string', 'number', 'boolean'].includes(typeof value) ? String(value) : '';
    })
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ ([,.!?;:])/g, '$1')
    .trim();
}

/** Words of a field's name that mean nothing alone ("the", "your"...): a question holding them does not ask for it. */
const FILLER_WORDS = new Set([
  'the',
  'and',
  'for',
  'are',
  'has',
  'have',
  'was',
  'not',
  'any',
  'per',
  'with',
  'your',
  'you',
]);

/** A trailing "s" ignored (on words of four letters or more). */
const singular = (word: string) => (word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word);

/**
 * A field's words: its name split at `_`, at lower-to-upper case changes and between letters and digits, lower-cased,
 * those of three letters or more that are not filler (all of them when none is).
 */
function wordsOfField(name: string): string[] {
  const words = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    // One pass, as the product's: "a1b" splits once, into "a" and "1b".
    .replace(
      /([A-Za-z])([0-9])|([0-9])([A-Za-z])/g,
      (_pair, letter?: string, digit?: string, digitFirst?: string, letterAfter?: string) =>
        letter !== undefined ? `${letter} ${digit}` : `${digitFirst} ${letterAfter}`,
    )
    .split(/[\s_]+/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
  const meaningful = words.filter((word) => word.length >= 3 && !FILLER_WORDS.has(word));
  return [...new Set((meaningful.length > 0 ? meaningful : words).map(singular))];
}

/** One word, or two of five letters or more that begin with the same five (deliver, delivery). */
const alike = (a: string, b: string) => a === b || (a.length >= 5 && b.length >= 5 && a.slice(0, 5) === b.slice(0, 5));

/** How many of the field's words the question holds as whole words. */
function mentions(fieldName: string, question: string): number {
  const questionWords = (question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(singular);
  return wordsOfField(fieldName).filter((word) => questionWords.some((other) => alike(word, other))).length;
}

/**
 * For each field in order, the question that asks for it: the one not yet taken that mentions it most, the earliest on
 * a tie; undefined when none mentions it.
 */
export function questionOfEachField(
  fieldNames: readonly string[],
  questions: readonly string[],
): Array<number | undefined> {
  const taken = new Set<number>();
  return fieldNames.map((fieldName) => {
    let best: { question: number; score: number } | undefined;
    questions.forEach((question, index) => {
      const score = taken.has(index) ? 0 : mentions(fieldName, question);
      if (score > 0 && score > (best?.score ?? 0)) best = { question: index, score };
    });
    if (best) taken.add(best.question);
    return best?.question;
  });
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** "2026-03-05" as a person says it: "March 5, 2026". */
export function spokenDate(isoDate: string): string {
  const [year, month, day] = isoDate.split('-').map(Number) as [number, number, number];
  return `${MONTH_NAMES[month - 1]} ${day}, ${year}`;
}

/** The day a value starts with ("2026-03-05", "2026-03-05T10:00:00Z"), if it is one the calendar has; else null. */
export function leadingIsoDate(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(value.trim());
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  const exists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return exists ? date.toISOString().slice(0, 10) : null;
}
