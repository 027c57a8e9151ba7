import type { Transcript } from '../calls/transcript';
import { matchFieldsToQuestions } from './field-questions';
import { MONTHS, NO_WORDS, YES_WORDS, isNonAnswer, isoDate } from './spoken-values';
import type { ExtractedValue, Extraction, ExtractionFieldSpec, ExtractionProvider } from './extraction';

/**
 * `rule-based`: the embedded extractor, no model (docs/features/call-intelligence.md). For each field, the
 * question that mentions it (lib/call-intelligence/field-questions.ts, among the agent's turns after the opening
 * that the lead answers) and the lead's answer to it, read by the field's type. A field no question
 * mentions is looked for by type in the answers no other field took (enum, date, number, boolean; not
 * string), with lower confidence.
 */
export const ruleBasedExtraction: ExtractionProvider = {
  name: 'rule-based',
  extract({ fields, transcript }) {
    return Promise.resolve(extractByRules(fields, transcript));
  },
};

/** Confidence of a value read from the answer to the question that asks for its field, and found by type elsewhere. */
const ASKED_CONFIDENCE = { string: 0.8, other: 0.9 };
const BY_TYPE_CONFIDENCE = { enum: 0.6, date: 0.6, number: 0.4, boolean: 0.4 };

export function extractByRules(fields: ReadonlyArray<ExtractionFieldSpec>, transcript: Transcript): Extraction {
  const exchanges = questionsAndAnswers(transcript);
  const askedBy = matchFieldsToQuestions(
    fields.map((field) => field.name),
    exchanges.map((exchange) => exchange.question),
  );
  const claimed = new Set(askedBy.filter((index) => index !== undefined));
  const extraction: Extraction = {};
  fields.forEach((field, fieldIndex) => {
    const asked = askedBy[fieldIndex];
    if (asked !== undefined) {
      const answer = exchanges[asked]!.answer;
      const value = isNonAnswer(answer) ? null : readValue(field, answer);
      extraction[field.name] = found(
        value,
        field.type === 'string' ? ASKED_CONFIDENCE.string : ASKED_CONFIDENCE.other,
        answer,
      );
      return;
    }
    extraction[field.name] = byType(field, exchanges, claimed);
  });
  return extraction;
}

/** The agent's turns after the opening that the lead answers, each with the lead's turns up to the agent's next. */
function questionsAndAnswers(transcript: Transcript): Array<{ question: string; answer: string }> {
  const exchanges: Array<{ question: string; answer: string }> = [];
  const firstAgentTurn = transcript.findIndex((turn) => turn.speaker === 'agent');
  transcript.forEach((turn, index) => {
    if (turn.speaker !== 'agent' || index === firstAgentTurn) return;
    const answer: string[] = [];
    for (let next = index + 1; next < transcript.length && transcript[next]!.speaker === 'lead'; next++)
      answer.push(transcript[next]!.text);
    if (answer.length > 0) exchanges.push({ question: turn.text, answer: answer.join(' ') });
  });
  return exchanges;
}

function byType(
  field: ExtractionFieldSpec,
  exchanges: Array<{ question: string; answer: string }>,
  claimed: Set<number>,
): ExtractedValue {
  if (!(field.type in BY_TYPE_CONFIDENCE)) return found(null, 0, null);
  for (const [index, { answer }] of exchanges.entries()) {
    if (claimed.has(index) || isNonAnswer(answer)) continue;
    const value = readValue(field, answer);
    if (value !== null) {
      claimed.add(index);
      return found(value, BY_TYPE_CONFIDENCE[field.type as keyof typeof BY_TYPE_CONFIDENCE], answer);
    }
  }
  return found(null, 0, null);
}

function found(value: ExtractedValue['value'], confidence: number, evidence: string | null): ExtractedValue {
  return value === null ? { value, confidence: 0, evidence } : { value, confidence, evidence };
}

/** The answer read as the field's type, or null when it holds no such value. */
export function readValue(field: ExtractionFieldSpec, answer: string): ExtractedValue['value'] {
  switch (field.type) {
    case 'number':
      return readNumber(answer);
    case 'boolean':
      return readBoolean(answer);
    case 'enum':
      return readEnum(answer, field.allowedValues ?? []);
    case 'date':
      return readDate(answer);
    default:
      return readString(answer);
  }
}

/** The first number: digits with an optional sign, thousands commas and decimals ("1,200.5"). */
function readNumber(answer: string): number | null {
  const match = /(?<![\p{L}\p{N}])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?/u.exec(answer);
  return match ? Number(match[0].replaceAll(',', '')) : null;
}

/** The first yes-word or no-word decides ("No, not really": false). */
function readBoolean(answer: string): boolean | null {
  for (const word of answer.toLowerCase().match(/[\p{L}']+/gu) ?? []) {
    if (YES_WORDS.has(word)) return true;
    if (NO_WORDS.has(word)) return false;
  }
  return null;
}

/**
 * How much of an answer an enum's values are looked for in (docs/hostile-input.md): a search for a value ignoring
 * case may compare most of the value at each place (`aaa…b` in `aaaa…`), so 100 values of 200 characters cost
 * 20,000 comparisons a character read. A lead's answer naming one of them says it long before this.
 */
export const ENUM_ANSWER_CHARS = 4000;

/**
 * The allowed value said earliest in the answer's first ENUM_ANSWER_CHARS characters, as a whole phrase ignoring
 * case; the longer on a tie. Answered as listed.
 */
function readEnum(answer: string, allowedValues: readonly string[]): string | null {
  const read = answer.slice(0, ENUM_ANSWER_CHARS);
  let best: { value: string; at: number } | null = null;
  for (const value of allowedValues) {
    const match = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, 'iu').exec(read);
    if (
      !match ||
      (match.index + match[0].length === read.length && WORD_CHAR.test(answer.slice(read.length, read.length + 2)))
    )
      continue; // a value cut off where the answer was clipped, the rest of its word beyond: not said whole
    if (!best || match.index < best.at || (match.index === best.at && value.length > best.value.length))
      best = { value, at: match.index };
  }
  return best?.value ?? null;
}

/** The text starts with a letter or a digit (what the enum pattern's lookahead refuses after a value). */
const WORD_CHAR = /^[\p{L}\p{N}]/u;

const MONTH = `(${MONTHS.join('|')})`;

/** YYYY-MM-DD, "March 5, 2026" or "5 March 2026" (English month names, any case), answered as YYYY-MM-DD. */
function readDate(answer: string): string | null {
  const iso = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(answer);
  if (iso) return isoDate(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const monthFirst = new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'i').exec(answer);
  if (monthFirst) return dateOf(monthFirst[3]!, monthFirst[1]!, monthFirst[2]!);
  const dayFirst = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH},?\\s+(\\d{4})\\b`, 'i').exec(
    answer,
  );
  return dayFirst ? dateOf(dayFirst[3]!, dayFirst[2]!, dayFirst[1]!) : null;
}

function dateOf(year: string, monthName: string, day: string): string | null {
  const month = MONTHS.indexOf(monthName.toLowerCase() as (typeof MONTHS)[number]) + 1;
  return isoDate(Number(year), month, Number(day));
}

/** Lead-ins a person puts before a value, taken off a string answer with the end punctuation. */
const STRING_LEAD_INS =
  /^(?:(?:yes|yeah|sure|well|okay|ok)[,.]?\s+)?(?:it'?s|it is|that would be|that'?s|that is|i'?d say|i think it'?s|my [\p{L} ]{1,40}? is|we are|we're|i am|i'm)\s+/iu;

function readString(answer: string): string | null {
  const value = withoutEndPunctuation(answer.trim().replace(STRING_LEAD_INS, '')).trim();
  return value === '' ? null : value;
}

/**
 * The text without its closing run of `.`, `!` and `?`, scanned from the end: `/[.!?]+$/` tried each start in a
 * long run of them not at the end, to the end of the run: quadratic (docs/hostile-input.md).
 */
function withoutEndPunctuation(text: string): string {
  let end = text.length;
  while (end > 0 && '.!?'.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
