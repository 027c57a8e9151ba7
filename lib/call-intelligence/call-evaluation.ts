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
  const agentTurns = input.transcript.filter((turn) => turn.speaker === 'agent').map((turn) => turn.text);
  const said = (line: string) => agentTurns.some((turn) => saysLine(turn, line));
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
 * Whether an agent's turn says a script line (words are letters and digits only, so plain in a pattern): the same words in order, ignoring case, punctuation and
 * spacing, a {{variable}} of the line standing for any words (the lead's value it was filled with).
 */
export function saysLine(turn: string, line: string): boolean {
  const pattern = line
    .split(/\{\{[^}]*\}\}/)
    .map((part) =>
      words(part)
        .map((word) => ` ${word}`)
        .join(''),
    )
    .join('(?: [\\p{L}\\p{N}]+)*');
  return new RegExp(`${pattern} `, 'u').test(` ${words(turn).join(' ')} `);
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
