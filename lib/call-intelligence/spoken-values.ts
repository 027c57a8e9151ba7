/**
 * Values as a person says them on a call, and back: the simulated conversation speaks extraction values
 * with these, and the rule-based extractor reads them back (docs/features/call-intelligence.md).
 */
export const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
] as const;

/** "2026-03-05" -> "March 5, 2026". */
export function spokenDate(isoDate: string): string {
  const [year, month, day] = isoDate.split('-').map(Number) as [number, number, number];
  const name = MONTHS[month - 1]!;
  return `${name[0]!.toUpperCase()}${name.slice(1)} ${day}, ${year}`;
}

/** A calendar date YYYY-MM-DD that exists, or null. */
export function isoDate(year: number, month: number, day: number): string | null {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

/** The calendar date at the start of a value such as "2026-03-05" or "2026-03-05T10:00:00Z", or null. */
export function leadingIsoDate(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(value.trim());
  return match ? isoDate(Number(match[1]), Number(match[2]), Number(match[3])) : null;
}

/** Words that say yes or no, as the first such word of an answer decides a boolean. */
export const YES_WORDS = new Set([
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'absolutely',
  'definitely',
  'correct',
  'right',
  'true',
]);
export const NO_WORDS = new Set([
  'no',
  'nope',
  'nah',
  'not',
  'never',
  'false',
  "don't",
  'dont',
  "isn't",
  "aren't",
  "wasn't",
]);

/** Answers that give no value ("I'm not sure"); a field answered so stays unfilled. */
export const NON_ANSWERS = [
  /\bnot sure\b/i,
  /\bdon'?t know\b/i,
  /\brather not say\b/i,
  /\bno idea\b/i,
  /\bcan'?t say\b/i,
  // What the transcript of a Twilio call says for a question nobody answered (lib/carriers/twilio/twiml.ts).
  /^\(no answer\)$/i,
];

export const isNonAnswer = (text: string) => NON_ANSWERS.some((pattern) => pattern.test(text));
