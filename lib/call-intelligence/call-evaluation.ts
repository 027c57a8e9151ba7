import type { Transcript } from '../calls/transcript';

/**
 * The evaluation of a call (docs/features/call-intelligence.md): a score of 0 to 100, the sum of the points of
 * six rules, each reason naming its rule, the points it gave and its most. A rule with nothing to check
 * (no agent, no questions, no extraction fields, an empty closing) gives its full points.
 */
export const EVALUATION_RULES = {
  answered_by_human: 20,
  opening_said: 10,
  questions_asked: 25,
  fields_filled: 25,
  closing_said: 10,
  call_length: 10,
} as const;

/** A call shorter than this was cut short (the lead hung up, or the line dropped). */
export const MIN_TALK_MS = 15_000;

export type EvaluationRule = keyof typeof EVALUATION_RULES;

export interface EvaluationReason {
  rule: EvaluationRule;
  points: number;
  maxPoints: number;
  detail: string;
}

export interface CallEvaluation {
  score: number;
  reasons: EvaluationReason[];
}

export interface EvaluationInput {
  script: { openingLine: string; questions: readonly string[]; closing: string } | null;
  fieldNames: readonly string[];
  transcript: Transcript;
  /** Field name -> extracted value (null: not found). */
  extracted: Record<string, unknown>;
  answeredBy: string | null;
  durationMs: number | null;
}

export function evaluateCall(input: EvaluationInput): CallEvaluation {
  // Each turn's words are read once, not once per script line.
  const agentTurns = input.transcript.filter((turn) => turn.speaker === 'agent').map((turn) => words(turn.text));
  const said = (line: string) => {
    const segments = literalSegments(line);
    return agentTurns.some((turn) => saysSegments(turn, segments));
  };
  const reasons: EvaluationReason[] = [
    rule(
      'answered_by_human',
      input.answeredBy === 'machine' ? 0 : 1,
      input.answeredBy === 'machine' ? 'an answering machine answered' : 'a person answered',
    ),
    lineRule('opening_said', input.script?.openingLine ?? '', said, 'the opening line'),
    shareRule(
      'questions_asked',
      input.script?.questions.filter((question) => said(question)).length ?? 0,
      input.script?.questions.length ?? 0,
      'questions asked',
    ),
    shareRule(
      'fields_filled',
      input.fieldNames.filter((name) => input.extracted[name] !== null && input.extracted[name] !== undefined).length,
      input.fieldNames.length,
      'extraction fields filled',
    ),
    lineRule('closing_said', input.script?.closing ?? '', said, 'the closing'),
    rule(
      'call_length',
      (input.durationMs ?? 0) >= MIN_TALK_MS ? 1 : 0,
      `talked ${Math.round((input.durationMs ?? 0) / 1000)} s (at least ${MIN_TALK_MS / 1000} s counts)`,
    ),
  ];
  return { score: reasons.reduce((sum, reason) => sum + reason.points, 0), reasons };
}

function rule(name: EvaluationRule, share: number, detail: string): EvaluationReason {
  const maxPoints = EVALUATION_RULES[name];
  return { rule: name, points: Math.round(maxPoints * share), maxPoints, detail };
}

function lineRule(name: EvaluationRule, line: string, said: (line: string) => boolean, what: string): EvaluationReason {
  if (line.trim() === '') return rule(name, 1, `no ${what} to say`);
  return said(line) ? rule(name, 1, `${what} was said`) : rule(name, 0, `${what} was not said`);
}

function shareRule(name: EvaluationRule, done: number, total: number, what: string): EvaluationReason {
  return total === 0
    ? rule(name, 1, `no ${what.split(' ').slice(0, -1).join(' ')} to check`)
    : rule(name, done / total, `${done} of ${total} ${what}`);
}

/**
 * Whether an agent's turn says a script line: the same words in order, ignoring case, punctuation and spacing, a
 * {{variable}} of the line standing for any words (the lead's value it was filled with). Linear in the turn and the
 * line (docs/hostile-input.md): the line's literal segments are found in order, each at its earliest place after the
 * one before (the earliest end leaves the most room for the rest, so a match is found when one exists), by a
 * Knuth-Morris-Pratt search over words: no backtracking pattern, whatever the tenant wrote.
 */
export function saysLine(turn: string, line: string): boolean {
  return saysSegments(words(turn), literalSegments(line));
}

function saysSegments(said: readonly string[], segments: readonly (readonly string[])[]): boolean {
  let from = 0;
  for (const segment of segments) {
    const at = indexOfWords(said, segment, from);
    if (at === -1) return false;
    from = at + segment.length;
  }
  return true;
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * The words of a line between its {{placeholders}} (what `line.split(/\{\{[^}]*\}\}/)` gives, in one pass: a
 * placeholder is `{{`, then no `}`, then `}}`). A `{{` whose first `}` is not doubled opens no placeholder, and
 * neither does any `{{` before that `}`, so the search goes on after it.
 */
function literalSegments(line: string): string[][] {
  const segments: string[][] = [];
  let segmentStart = 0;
  let from = 0;
  for (;;) {
    const open = line.indexOf('{{', from);
    if (open === -1) break;
    const close = line.indexOf('}', open + 2);
    if (close === -1) break;
    if (line[close + 1] === '}') {
      segments.push(words(line.slice(segmentStart, open)));
      segmentStart = close + 2;
      from = close + 2;
    } else from = close + 1;
  }
  segments.push(words(line.slice(segmentStart)));
  return segments;
}

/** The first index at or after `from` where `needle` occurs in `haystack` as consecutive words, or -1 (KMP). */
function indexOfWords(haystack: readonly string[], needle: readonly string[], from: number): number {
  if (needle.length === 0) return from;
  const fallback = new Array<number>(needle.length).fill(0);
  for (let index = 1, matched = 0; index < needle.length; index++) {
    while (matched > 0 && needle[index] !== needle[matched]) matched = fallback[matched - 1]!;
    if (needle[index] === needle[matched]) matched++;
    fallback[index] = matched;
  }
  for (let index = from, matched = 0; index < haystack.length; index++) {
    while (matched > 0 && haystack[index] !== needle[matched]) matched = fallback[matched - 1]!;
    if (haystack[index] === needle[matched]) matched++;
    if (matched === needle.length) return index - needle.length + 1;
  }
  return -1;
}
