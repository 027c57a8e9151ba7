// Script-line matching (lib/call-intelligence/call-evaluation.ts saysLine, docs/hostile-input.md): linear in the turn
// and the line whatever a tenant writes, and the same answers as the regex it replaced.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateCall, saysLine } from '../../lib/call-intelligence/call-evaluation';
import { AGENT_LIMITS, scriptSchema } from '../../lib/agents/agent-definition';
import type { Transcript } from '../../lib/calls/transcript';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

/** The replaced implementation: each {{placeholder}} a `(?: [\p{L}\p{N}]+)*`, which backtracks in a high power. */
function saysLineByRegex(turn: string, line: string): boolean {
  const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
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

/** A line at the caps: its characters and placeholders, the words it ends with never said. */
const lineAtCap = (() => {
  const head = Array.from({ length: AGENT_LIMITS.placeholdersPerLine }, (_, index) => `w{{v${index}}}`).join(' ');
  return `${head} ${repeatedTo('w ', AGENT_LIMITS.lineChars - head.length - 8)} nowhere`.slice(-AGENT_LIMITS.lineChars);
})();
/** A turn of 64 KiB of one word said over and over: every gap could take any number of them. */
const longTurn = repeatedTo('w ', UNCAPPED_CHARS);

describe('saysLine on hostile lines and turns', () => {
  it('the line at its caps against a 64 KiB turn', () => {
    expect(scriptSchema.safeParse({ openingLine: lineAtCap }).success).toBe(true);
    expect(saysLine(longTurn, lineAtCap)).toBe(false);
    expect(bestTimeMs(() => saysLine(longTurn, lineAtCap))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });

  it('a stored line from before the caps (64 KiB, a placeholder every few characters) against a 64 KiB turn', () => {
    const line = `${repeatedTo('w {{x}} ', UNCAPPED_CHARS - 8)} nowhere`;
    expect(saysLine(longTurn, line)).toBe(false);
    expect(saysLine(`${longTurn} nowhere`, line)).toBe(true);
    expect(bestTimeMs(() => saysLine(longTurn, line))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });

  it('braces that open no placeholder, 64 KiB of them', () => {
    const line = repeatedTo('{{', UNCAPPED_CHARS);
    expect(saysLine('anything', line)).toBe(true);
    expect(bestTimeMs(() => saysLine(longTurn, line))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });

  it('a call evaluated with every script line at its caps against a 64 KiB transcript', () => {
    const transcript: Transcript = Array.from({ length: 16 }, (_, index) => ({
      speaker: index % 2 === 0 ? 'agent' : 'lead',
      text: repeatedTo('w ', UNCAPPED_CHARS / 16),
      offsetMs: index * 1000,
    }));
    const script = {
      openingLine: lineAtCap,
      questions: Array.from({ length: AGENT_LIMITS.questions }, () => lineAtCap),
      closing: lineAtCap,
    };
    const evaluate = () =>
      evaluateCall({ script, fieldNames: [], transcript, extracted: {}, answeredBy: 'human', durationMs: 60_000 });
    expect(evaluate().reasons.find((reason) => reason.rule === 'questions_asked')?.points).toBe(0);
    expect(bestTimeMs(evaluate)).toBeLessThan(WORST_CASE_BUDGET_MS);
  });
});

describe('a line over the placeholder cap', () => {
  it('is refused by the script schema, one under it accepted', () => {
    const line = (count: number) => Array.from({ length: count }, (_, index) => `{{v${index}}}`).join(' ');
    expect(scriptSchema.safeParse({ openingLine: line(AGENT_LIMITS.placeholdersPerLine) }).success).toBe(true);
    const refused = scriptSchema.safeParse({
      openingLine: 'hi',
      questions: [line(AGENT_LIMITS.placeholdersPerLine + 1)],
    });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['questions', 0]);
  });
});

describe('saysLine answers as the regex it replaced', () => {
  // Few words, so that lines and turns share them often; braces and punctuation to split placeholders every way.
  const token = fc.constantFrom('a', 'b', 'ab', 'A', '{{', '}}', '{', '}', '{{x}}', '{{ y }}', ' ', ',', '1', 'é');
  const text = fc.array(token, { maxLength: 14 }).map((tokens) => tokens.join(' '));
  const glued = fc.array(token, { maxLength: 14 }).map((tokens) => tokens.join(''));

  it('on small lines and turns', () => {
    fc.assert(
      fc.property(fc.oneof(text, glued), fc.oneof(text, glued), (turn, line) => {
        expect(saysLine(turn, line)).toBe(saysLineByRegex(turn, line));
      }),
      { numRuns: 3000 },
    );
  });
});
