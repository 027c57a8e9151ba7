// Rule-based extraction (lib/call-intelligence/rule-based-extraction.ts, docs/hostile-input.md): every reading of an
// answer linear in the answer, an enum's tenant-written values escaped into bounded patterns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AGENT_LIMITS } from '../../lib/agents/agent-definition';
import { ENUM_ANSWER_CHARS, readValue } from '../../lib/call-intelligence/rule-based-extraction';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

const STRING_LEAD_INS =
  /^(?:(?:yes|yeah|sure|well|okay|ok)[,.]?\s+)?(?:it'?s|it is|that would be|that'?s|that is|i'?d say|i think it'?s|my [\p{L} ]{1,40}? is|we are|we're|i am|i'm)\s+/iu;

/** The replaced string reading: `/[.!?]+$/` tries every start in a long run of them. */
function readStringByRegex(answer: string): string | null {
  const value = answer
    .trim()
    .replace(STRING_LEAD_INS, '')
    .replace(/[.!?]+$/, '')
    .trim();
  return value === '' ? null : value;
}

/** An answer is one lead turn: no lower cap than 64 KiB applies to what a recogniser hears. */
const ANSWERS = [
  repeatedTo('!', UNCAPPED_CHARS - 1) + 'x',
  repeatedTo('.?', UNCAPPED_CHARS - 2) + ' x',
  repeatedTo('1', UNCAPPED_CHARS),
  repeatedTo('1,', UNCAPPED_CHARS),
  repeatedTo('1 ', UNCAPPED_CHARS),
  `march ${repeatedTo(' ', UNCAPPED_CHARS)}5`,
  repeatedTo('1st of ', UNCAPPED_CHARS),
  repeatedTo('yes no ', UNCAPPED_CHARS),
  `my ${repeatedTo('a ', UNCAPPED_CHARS)}`,
];

describe('readValue at 64 KiB', () => {
  for (const type of ['string', 'number', 'boolean', 'date'] as const)
    it(`a ${type} field on each worst-case answer`, () => {
      for (const answer of ANSWERS)
        expect(
          bestTimeMs(() => readValue({ name: 'f', type }, answer)),
          answer.slice(0, 12),
        ).toBeLessThan(WORST_CASE_BUDGET_MS);
    });

  it('an enum field at its caps (100 values of 200 characters, each nearly said)', () => {
    const allowedValues = Array.from(
      { length: AGENT_LIMITS.allowedValues },
      (_, index) => 'a'.repeat(AGENT_LIMITS.allowedValueChars - 2) + `.${String.fromCharCode(98 + (index % 20))}`,
    );
    const answer = repeatedTo('a', UNCAPPED_CHARS);
    expect(readValue({ name: 'f', type: 'enum', allowedValues }, answer)).toBeNull();
    expect(bestTimeMs(() => readValue({ name: 'f', type: 'enum', allowedValues }, answer))).toBeLessThan(
      WORST_CASE_BUDGET_MS,
    );
  });
});

/** The replaced enum reading: the whole answer searched for each value. */
function readEnumWhole(answer: string, allowedValues: readonly string[]): string | null {
  let best: { value: string; at: number } | null = null;
  for (const value of allowedValues) {
    const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const match = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu').exec(answer);
    if (match && (!best || match.index < best.at || (match.index === best.at && value.length > best.value.length)))
      best = { value, at: match.index };
  }
  return best?.value ?? null;
}

describe('an enum answer', () => {
  const enumField = (allowedValues: string[]) => ({ name: 'plan', type: 'enum', allowedValues });

  it('reads as before on answers within the clip', () => {
    const value = fc.constantFrom('pro', 'Pro plan', 'basic', 'a.b', 'ß', 'x+');
    const token = fc.constantFrom('pro', 'PRO', 'plan', ' ', 'basic', 'basics', 'a.b', 'SS', 'ß', 'x+', '.', 'é');
    fc.assert(
      fc.property(
        fc.uniqueArray(value, { minLength: 1, maxLength: 4 }),
        fc.array(token, { maxLength: 10 }),
        (values, tokens) => {
          const answer = tokens.join('');
          expect(readValue(enumField(values), answer)).toBe(readEnumWhole(answer, values));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is looked for in the first ENUM_ANSWER_CHARS characters, a value cut off there not read', () => {
    const padding = repeatedTo(' x', ENUM_ANSWER_CHARS - 3); // ends with a space
    expect(readValue(enumField(['pro']), `${padding}pro`)).toBe('pro');
    expect(readValue(enumField(['pro']), `${padding}pro.`)).toBe('pro');
    expect(readValue(enumField(['pro']), `${padding}profit`)).toBeNull();
    expect(readValue(enumField(['pro']), `${padding} pro`)).toBeNull();
  });
});

describe('a string answer reads as before', () => {
  const token = fc.constantFrom('it is', 'my plan is', 'yes,', 'Acme', '.', '!', '?', ' ', '..', 'a.b', '\n');
  it('on small answers', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 12 }), (tokens) => {
        const answer = tokens.join('');
        expect(readValue({ name: 'f', type: 'string' }, answer)).toBe(readStringByRegex(answer));
      }),
      { numRuns: 3000 },
    );
  });
});
