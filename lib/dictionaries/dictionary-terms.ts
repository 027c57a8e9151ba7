/**
 * The terms of a dictionary (a pronunciation and recognition word list) as they are stored: how a term
 * is normalised, what makes a list acceptable, and what charCount counts. docs/features/dictionaries.md.
 * A term may carry a pronunciation, `written => spoken`: lib/dictionaries/pronunciations.ts.
 */

import { PRONUNCIATION_ARROW, parseTerm } from './pronunciations';

/** Limits of one dictionary and of a workspace's dictionaries. Lengths are in Unicode code points. */
export const DICTIONARY_LIMITS = {
  /** Items of `terms` in a request (so also stored terms: duplicates only make the list shorter). */
  termsPerDictionary: 1000,
  /** Code points of one term once normalised. */
  termLength: 100,
  /** The most charCount a dictionary may reach: code points of all its terms once normalised and deduplicated. */
  totalCharacters: 20_000,
  nameLength: 200,
  descriptionLength: 2000,
  externalIdLength: 200,
  /** Dictionaries of one workspace: GET /dictionaries answers them all at once, so the list stays bounded. */
  dictionariesPerWorkspace: 200,
} as const;

/** Control characters left once whitespace is collapsed (BEL, ESC, DEL...): nothing a spoken word holds. */
const CONTROL = /\p{Cc}/u;

/** Length in Unicode code points: what a person counts as characters in most scripts, and what the limits count. */
export function codePointLength(text: string): number {
  return [...text].length;
}

/**
 * One term as stored: Unicode NFC (a composed and a decomposed "é" are the same term of one code point),
 * every run of whitespace (spaces, tabs, line breaks, no-break spaces) made one space, then trimmed; a pronunciation
 * `written => spoken` (lib/dictionaries/pronunciations.ts) with one space either side of its arrow.
 */
export function normaliseTerm(raw: string): string {
  const term = raw.normalize('NFC').replace(/\s+/gu, ' ').trim();
  const { written, spoken } = parseTerm(term);
  return spoken === null ? term : `${written} ${PRONUNCIATION_ARROW} ${spoken}`;
}

/** What is wrong with a pronunciation term's two sides; null: nothing (or not a pronunciation). */
function pronunciationProblem(term: string): string | null {
  const { written, spoken } = parseTerm(term);
  if (spoken === null) return null;
  if (!written) return `has nothing written before ${PRONUNCIATION_ARROW}`;
  if (!spoken) return `has nothing to say after ${PRONUNCIATION_ARROW}`;
  if (spoken.includes(PRONUNCIATION_ARROW)) return `holds ${PRONUNCIATION_ARROW} more than once`;
  return null;
}

/** charCount of a dictionary: the sum of its stored terms' lengths in code points (separators not counted). */
export function charCountOf(terms: readonly string[]): number {
  return terms.reduce((sum, term) => sum + codePointLength(term), 0);
}

export interface TermProblem {
  /** The position of the term in the request; none: the list as a whole. */
  index?: number;
  message: string;
}

/**
 * The list as stored: each term normalised, duplicates (exact, case-sensitive, after normalisation)
 * removed keeping the first occurrence in its place. A term empty once trimmed, holding a control
 * character or longer than the limit is a problem at its index; a list whose charCount passes the limit
 * is a problem of the whole list. Any problem: nothing is stored.
 */
export function normaliseTerms(raw: readonly string[]): { terms: string[]; problems: TermProblem[] } {
  const terms: string[] = [];
  const seen = new Set<string>();
  const problems: TermProblem[] = [];
  raw.forEach((rawTerm, index) => {
    const term = normaliseTerm(rawTerm);
    if (!term) problems.push({ index, message: 'is empty once whitespace is trimmed' });
    else if (CONTROL.test(term)) problems.push({ index, message: 'contains a control character' });
    else if (codePointLength(term) > DICTIONARY_LIMITS.termLength)
      problems.push({ index, message: `is longer than ${DICTIONARY_LIMITS.termLength} characters once normalised` });
    else if (pronunciationProblem(term)) problems.push({ index, message: pronunciationProblem(term)! });
    else if (!seen.has(term)) {
      seen.add(term);
      terms.push(term);
    }
  });
  const charCount = charCountOf(terms);
  if (charCount > DICTIONARY_LIMITS.totalCharacters)
    problems.push({
      message: `hold ${charCount} characters once normalised and deduplicated, more than ${DICTIONARY_LIMITS.totalCharacters}`,
    });
  return { terms, problems };
}
