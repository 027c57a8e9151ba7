/**
 * Dictionary terms as pronunciations (docs/features/dictionaries.md#pronunciations): a term `written => spoken` is
 * recognised as `written` and said as `spoken`; a term without the arrow is only a recognition hint. How the spoken form
 * reaches a voice (SSML `<sub alias>` or the text replaced) is each speech path's choice; this file finds where the
 * written forms occur in a text, in one pass.
 */

import { escapeXml } from '../xml';

/** What separates a term's written form from its spoken form, stored with one space either side. */
export const PRONUNCIATION_ARROW = '=>';

export interface ParsedTerm {
  /** What is recognised, listened for and matched in the agent's text. */
  written: string;
  /** What is said in its place; null: the term is only a recognition hint. */
  spoken: string | null;
}

/** A stored (normalised) term read as its written and spoken forms. */
export function parseTerm(term: string): ParsedTerm {
  const arrow = term.indexOf(PRONUNCIATION_ARROW);
  if (arrow < 0) return { written: term, spoken: null };
  return {
    written: term.slice(0, arrow).trim(),
    spoken: term.slice(arrow + PRONUNCIATION_ARROW.length).trim(),
  };
}

/** The written forms of terms: what recognition hints and the model's spelling list use. */
export const writtenFormsOf = (terms: readonly string[]) => terms.map((term) => parseTerm(term).written);

/**
 * A word (letters, marks and digits, with inner apostrophes: "O'Neil" is one word) or any other single non-space
 * character. Fixed, not built from terms; each repetition of the group consumes an apostrophe, so it runs in linear time.
 */
const TOKEN = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*|\S/gu;

interface Token {
  text: string;
  start: number;
  end: number;
}

const tokensOf = (text: string): Token[] =>
  Array.from(text.matchAll(TOKEN), (match) => ({
    text: match[0],
    start: match.index,
    end: match.index + match[0].length,
  }));

interface TrieNode {
  next: Map<string, TrieNode>;
  spoken?: string;
}

/** The pronunciations of an agent's terms, looked up token by token. */
export interface Pronunciations {
  root: TrieNode;
  /** No term has a spoken form: texts pass unchanged. */
  empty: boolean;
}

/**
 * The pronunciations of an agent's terms (its dictionaries' terms in order): a trie of the written forms' tokens.
 * A written form given twice keeps its first spoken form. Time and memory linear in the terms' total length
 * (at most `AGENT_LIMITS.dictionaries` × `DICTIONARY_LIMITS.totalCharacters` code points).
 */
export function pronunciationsOf(terms: readonly string[]): Pronunciations {
  const root: TrieNode = { next: new Map() };
  let empty = true;
  for (const term of terms) {
    const { written, spoken } = parseTerm(term);
    if (!spoken) continue;
    const tokens = tokensOf(written);
    if (!tokens.length) continue;
    let node = root;
    for (const token of tokens) {
      let child = node.next.get(token.text);
      if (!child) node.next.set(token.text, (child = { next: new Map() }));
      node = child;
    }
    if (node.spoken === undefined) {
      node.spoken = spoken;
      empty = false;
    }
  }
  return { root, empty };
}

/** A piece of a text: as written, or a term's written form (exactly as the text has it) and what to say instead. */
export type SpokenPiece = { text: string } | { written: string; spoken: string };

/**
 * The text cut where the terms' written forms occur, as whole tokens, case-sensitively ("US" is not "us"), the
 * longest form at each place, left to right without overlaps; whitespace between a form's tokens may be any.
 * Each token starts at most one walk down the trie, no deeper than a term's tokens (at most
 * `DICTIONARY_LIMITS.termLength`), so the time is linear in the text's length times that bound.
 */
export function spokenPiecesOf(text: string, pronunciations: Pronunciations): SpokenPiece[] {
  if (pronunciations.empty) return [{ text }];
  const tokens = tokensOf(text);
  const pieces: SpokenPiece[] = [];
  let written = 0;
  let index = 0;
  while (index < tokens.length) {
    let node: TrieNode | undefined = pronunciations.root;
    let match: { last: number; spoken: string } | null = null;
    for (let at = index; at < tokens.length; at++) {
      node = node.next.get(tokens[at]!.text);
      if (!node) break;
      if (node.spoken !== undefined) match = { last: at, spoken: node.spoken };
    }
    if (!match) {
      index += 1;
      continue;
    }
    const start = tokens[index]!.start;
    const end = tokens[match.last]!.end;
    if (start > written) pieces.push({ text: text.slice(written, start) });
    pieces.push({ written: text.slice(start, end), spoken: match.spoken });
    written = end;
    index = match.last + 1;
  }
  if (written < text.length) pieces.push({ text: text.slice(written) });
  return pieces;
}

/** Whether any piece is a term said otherwise. */
export const hasPronunciation = (pieces: readonly SpokenPiece[]) => pieces.some((piece) => 'spoken' in piece);

/** The text with each term's spoken form in place of its written one: for voices that take no SSML. */
export const spokenTextOf = (pieces: readonly SpokenPiece[]) =>
  pieces.map((piece) => ('spoken' in piece ? piece.spoken : piece.text)).join('');

/**
 * The text as SSML content (no `<speak>` root: the caller wraps it where its path needs one), each term an SSML
 * `<sub alias="spoken">written</sub>`, everything escaped.
 */
export const ssmlOf = (pieces: readonly SpokenPiece[]) =>
  pieces
    .map((piece) =>
      'spoken' in piece
        ? `<sub alias="${escapeXml(piece.spoken)}">${escapeXml(piece.written)}</sub>`
        : escapeXml(piece.text),
    )
    .join('');

/**
 * A reply streamed as tokens, with its terms said as their spoken forms, for the relays (plain text: a term's written
 * form may be cut across tokens, so an agent with pronunciations has its reply gathered and sent as one token; an
 * agent without any streams as the engine writes).
 */
export async function* pronouncedTokens(
  tokens: Iterable<string> | AsyncIterable<string>,
  pronunciations: Pronunciations,
): AsyncIterable<string> {
  let reply = '';
  for await (const token of tokens) {
    if (pronunciations.empty) yield token;
    else reply += token;
  }
  if (reply) yield spokenTextOf(spokenPiecesOf(reply, pronunciations));
}

/**
 * A line as a speech path takes it: SSML content (`<sub alias>`, no `<speak>` root, escaped) when a term occurs and the
 * voice reads SSML, the spoken forms put in the text when a term occurs and it does not, the text as written otherwise.
 */
export function pronouncedLine(
  text: string,
  pronunciations: Pronunciations,
  voiceReadsSsml: boolean,
): { ssml: string } | { text: string } {
  const pieces = spokenPiecesOf(text, pronunciations);
  if (!hasPronunciation(pieces)) return { text };
  return voiceReadsSsml ? { ssml: ssmlOf(pieces) } : { text: spokenTextOf(pieces) };
}
