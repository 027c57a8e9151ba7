// Intent and time recognition (lib/conversation/intents.ts, lib/conversation/time-expressions.ts, docs/hostile-input.md):
// linear in what the lead said, and the same readings as before the rewrite of how read text is marked.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recogniseIntent } from '../../lib/conversation/intents';
import {
  boundedSummary,
  scriptTransferSummary,
  TRANSFER_SUMMARY_MAX_CHARS,
} from '../../lib/conversation/transfer-summary';
import { asksSomething, asksToRepeat, spokenAnswerOf } from '../../lib/conversation/knowledge-answer';
import { TIME_RULES, findTimeExpression, type TimeExpression } from '../../lib/conversation/time-expressions';

type Slots = Omit<TimeExpression, 'span'>;
import { normaliseUtterance, type RuleLanguage } from '../../lib/conversation/utterance';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

/** What each language's rules read most of: a reading every few characters, each once marked read. */
const WORST_CASES: [RuleLanguage, string][] = [
  ['en', 'tomorrow '],
  ['en', 'at three '],
  ['en', 'in two hours '],
  ['en', 'no yes '],
  ['en', "don't call "],
  ['en', '3:30 pm '],
  ['es', 'manana '],
  ['es', 'a las tres y media '],
  ['es', 'por la manana '],
  ['en', ' '],
  ['en', '1.1.1.1.'],
];

describe('recogniseIntent and findTimeExpression at 64 KiB', () => {
  for (const [language, unit] of WORST_CASES)
    it(`"${unit}" over and over (${language})`, () => {
      const utterance = repeatedTo(unit, UNCAPPED_CHARS);
      expect(bestTimeMs(() => recogniseIntent(utterance, language))).toBeLessThan(WORST_CASE_BUDGET_MS);
      const text = normaliseUtterance(utterance);
      expect(bestTimeMs(() => findTimeExpression(text, language))).toBeLessThan(WORST_CASE_BUDGET_MS);
    });
});

describe('asksSomething, asksToRepeat and spokenAnswerOf at 64 KiB', () => {
  for (const [language, unit] of [
    ['en', 'so '],
    ['en', 'so well um '],
    ['es', 'y pero '],
    ['en', 'what '],
  ] as const)
    it(`"${unit}" over and over (${language})`, () => {
      const utterance = repeatedTo(unit, UNCAPPED_CHARS);
      expect(bestTimeMs(() => asksSomething(utterance, language))).toBeLessThan(WORST_CASE_BUDGET_MS);
      expect(bestTimeMs(() => asksToRepeat(utterance, language))).toBeLessThan(WORST_CASE_BUDGET_MS);
    });

  it('a passage and a question of 64 KiB each: the passage read to its first 4,000 characters', () => {
    const question = repeatedTo('delivery canada ', UNCAPPED_CHARS);
    for (const unit of ['a. ', 'delivery ', 'x', '!?'])
      expect(bestTimeMs(() => spokenAnswerOf({ text: repeatedTo(unit, UNCAPPED_CHARS) }, question))).toBeLessThan(
        WORST_CASE_BUDGET_MS,
      );
  });
});

describe("a warm transfer's summary at 64 KiB (docs/features/conversation/tools.md#warm-transfer)", () => {
  const codePoints = (text: string | null) => [...(text ?? '')].length;
  for (const unit of ['a ', ' ', '\u{1F600}', 'word\t\n'])
    it(`"${JSON.stringify(unit)}" over and over, as a model's summary and as 50 answers of the script`, () => {
      const text = repeatedTo(unit, UNCAPPED_CHARS);
      expect(bestTimeMs(() => boundedSummary(text))).toBeLessThan(WORST_CASE_BUDGET_MS);
      expect(codePoints(boundedSummary(text))).toBeLessThanOrEqual(TRANSFER_SUMMARY_MAX_CHARS);
      const answers = Array.from({ length: 50 }, () => ({ question: text, answer: text }));
      expect(bestTimeMs(() => scriptTransferSummary(text, answers))).toBeLessThan(WORST_CASE_BUDGET_MS);
      expect(codePoints(scriptTransferSummary(text, answers))).toBeLessThanOrEqual(TRANSFER_SUMMARY_MAX_CHARS);
    });

  it('keeps a short summary whole, its whitespace runs one space, and marks a cut one', () => {
    expect(boundedSummary('  Ana   wants\nred shoes. ')).toBe('Ana wants red shoes.');
    expect(boundedSummary('   ')).toBeNull();
    const cut = boundedSummary('x'.repeat(1_000))!;
    expect(codePoints(cut)).toBe(TRANSFER_SUMMARY_MAX_CHARS);
    expect(cut.endsWith('…')).toBe(true);
    expect(scriptTransferSummary('Ana asked to speak to a person.', [{ question: 'Colour?', answer: 'Red.' }])).toBe(
      'Ana asked to speak to a person. Answers so far: Colour? Red.',
    );
  });
});

/** The replaced loop: the text copied again for every reading marked read (quadratic in readings). */
function findTimeExpressionCopying(text: string, language: RuleLanguage): TimeExpression | null {
  let unread = text;
  const found: { start: number; end: number; slots: Slots }[] = [];
  for (const rule of TIME_RULES[language]) {
    for (const match of unread.matchAll(rule.pattern)) {
      const slots = rule.read(match.groups ?? {});
      if (!slots) continue;
      const start = match.index;
      const end = start + match[0].length;
      found.push({ start, end, slots });
      unread = unread.slice(0, start) + '#'.repeat(end - start) + unread.slice(end);
    }
  }
  if (found.length === 0) return null;
  found.sort((a, b) => a.start - b.start);
  const slots = found.reduce<Slots>((said, reading) => ({ ...said, ...reading.slots }), {});
  return { ...slots, span: [found[0]!.start, Math.max(...found.map((reading) => reading.end))] };
}

describe('findTimeExpression reads as before', () => {
  const word = fc.constantFrom(
    'tomorrow',
    'at',
    'three',
    'in',
    'two',
    'hours',
    'on',
    'monday',
    'morning',
    'this',
    'half',
    'past',
    'pm',
    '3:30',
    'noon',
    'the',
    'day',
    'after',
    'manana',
    'por',
    'la',
    'a',
    'las',
    'tres',
    'y',
    'media',
    'lunes',
    'hoy',
    'no',
  );
  it('on small utterances of time words', () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 12 }), fc.constantFrom<RuleLanguage>('en', 'es'), (words, language) => {
        const text = words.join(' ');
        expect(findTimeExpression(text, language)).toEqual(findTimeExpressionCopying(text, language));
      }),
      { numRuns: 2000 },
    );
  });
});
