// Redaction (lib/compliance/redaction.ts, docs/hostile-input.md): every rule linear in the text whatever a lead says
// or a tool returns, and the same masking as the code it replaced.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  REDACTION_LABELS,
  REDACTION_RULES,
  passesLuhn,
  redactText,
  type RedactionRule,
} from '../../lib/compliance/redaction';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

/** The replaced card search: every span of groups from each start tried, each joined again (cubic in groups). */
function maskCardsInRunBySpans(run: string): string {
  const groups = run.split(/([ -])/);
  const digitGroups = groups.filter((_, index) => index % 2 === 0);
  const masked: string[] = [];
  let index = 0;
  while (index < digitGroups.length) {
    let end = -1;
    for (let last = digitGroups.length; last > index; last--) {
      const digits = digitGroups.slice(index, last).join('');
      if (digits.length >= 13 && digits.length <= 19 && passesLuhn(digits)) {
        end = last;
        break;
      }
    }
    if (end === -1) {
      masked.push(digitGroups[index]!, index + 1 < digitGroups.length ? groups[index * 2 + 1]! : '');
      index += 1;
    } else {
      masked.push(REDACTION_LABELS.card_number, end < digitGroups.length ? groups[end * 2 - 1]! : '');
      index = end;
    }
  }
  return masked.join('');
}

const DIGIT_RUN = /(?<![\p{L}\p{N}])\d+(?:[ -]\d+)*(?![\p{L}\p{N}])/gu;
/** The replaced written-address pattern: an unbounded local part, scanned again from every start in it. */
const EMAIL_WRITTEN_BY_REGEX = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
const EMAIL_SPOKEN_BY_REGEX =
  /(?<![\p{L}\p{N}])[\p{L}\p{N}._%+-]+ at [\p{L}\p{N}-]+(?: dot [\p{L}\p{N}-]+)* dot (?:com|net|org|edu|gov|io|co|uk|us|es|mx|de|fr|info|biz)(?![\p{L}\p{N}])/giu;

/** The reference of each rule the rewrite touched; the others (IBAN, SSN) are bounded patterns, unchanged. */
const REFERENCE: Partial<Record<RedactionRule, (text: string) => string>> = {
  card_number: (text) => text.replace(DIGIT_RUN, maskCardsInRunBySpans),
  email_address: (text) =>
    text
      .replace(EMAIL_WRITTEN_BY_REGEX, REDACTION_LABELS.email_address)
      .replace(EMAIL_SPOKEN_BY_REGEX, REDACTION_LABELS.email_address),
};

const all = { redactions: REDACTION_RULES };

/** Worst cases at 64 KiB (a transcript turn or a tool's result has no lower cap): what made each old rule slow. */
const WORST_CASES: Record<string, string> = {
  'digit groups of one digit (cubic card search)': repeatedTo('1 ', UNCAPPED_CHARS),
  'dash-joined digit groups': repeatedTo('9-', UNCAPPED_CHARS),
  'one digit run': repeatedTo('4', UNCAPPED_CHARS),
  'groups that make cards and near-cards': repeatedTo('4111 1111 1111 1111 1 ', UNCAPPED_CHARS),
  'a local part without an @': repeatedTo('a', UNCAPPED_CHARS),
  'dotted local parts without an @': repeatedTo('a.', UNCAPPED_CHARS),
  'a long local part, an @ and a domain that never ends': `${repeatedTo('a', UNCAPPED_CHARS / 2)}@${repeatedTo('b.', UNCAPPED_CHARS / 2 - 2)}1`,
  'many @s': repeatedTo('a@b.', UNCAPPED_CHARS),
  'spoken local parts without a domain': repeatedTo('a.b.c at ', UNCAPPED_CHARS),
  'spoken domains that never end': `x at ${repeatedTo('y dot ', UNCAPPED_CHARS - 8)}`,
  'IBAN-like groups': repeatedTo('DE89 3704 ', UNCAPPED_CHARS),
  'SSN-like groups': repeatedTo('123-45-', UNCAPPED_CHARS),
};

describe('every redaction rule on its worst cases at 64 KiB', () => {
  for (const [name, text] of Object.entries(WORST_CASES))
    it(name, () => {
      expect(bestTimeMs(() => redactText(text, all))).toBeLessThan(WORST_CASE_BUDGET_MS);
    });

  it('the card search still masks the first card of a long run', () => {
    const run = `4111 1111 1111 1111 ${repeatedTo('1 ', UNCAPPED_CHARS)}`;
    expect(redactText(run, { redactions: ['card_number'] }).startsWith('[card number] 1 1')).toBe(true);
  });
});

describe('the rewritten rules mask as the code they replaced', () => {
  const cardToken = fc.constantFrom('4111', '1111', '1', '12', '5555555555554444', '0', '9', ' ', '-', 'a', '  ', '--');
  const emailToken = fc.constantFrom(
    'a',
    'b.',
    '.',
    '@',
    'x',
    'é',
    '-',
    '+',
    ' at ',
    ' dot ',
    'com',
    'co',
    'AT',
    ' AT ',
    ' Dot ',
    'dot',
    'at',
    '.com',
    ' ',
    '1',
    '😀',
  );

  for (const [rule, token] of [
    ['card_number', cardToken],
    ['email_address', emailToken],
  ] as const)
    it(`${rule} on small texts`, () => {
      fc.assert(
        fc.property(fc.array(token, { maxLength: 30 }), (tokens) => {
          const text = tokens.join('');
          expect(redactText(text, { redactions: [rule] })).toBe(REFERENCE[rule]!(text));
        }),
        { numRuns: 5000 },
      );
    });

  it('card_number on runs of many groups (the reference is cubic: kept to 60 groups)', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^\d{1,5}$/), { minLength: 1, maxLength: 60 }), (groups) => {
        const text = groups.join(' ');
        expect(redactText(text, { redactions: ['card_number'] })).toBe(REFERENCE.card_number!(text));
      }),
      { numRuns: 500 },
    );
  });
});
