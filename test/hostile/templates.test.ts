// Templates (docs/hostile-input.md): a journey's templates (lib/journeys/render.ts) and the agent's lines filled
// with a lead's values (lib/lead-placeholders.ts filled), linear in the template.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VARIABLE_PATH_SOURCE } from '../../lib/journeys/descriptor';
import { parseReferences, renderTemplate } from '../../lib/journeys/render';
import { filled } from '../../lib/lead-placeholders';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

/** The replaced pattern: two `\s*` around an optional `?` split a run of spaces every way before failing. */
const REFERENCE_BY_REGEX = new RegExp(`(?<!\\{)\\{\\{\\s*(${VARIABLE_PATH_SOURCE})\\s*(\\?)?\\s*\\}\\}(?!\\})`, 'g');

/** Templates of 64 KiB (no lower cap applies to a node's stored text): braces and spaces that never close. */
const TEMPLATES = [
  `{{a${repeatedTo(' ', UNCAPPED_CHARS)}`,
  `{{ a ?${repeatedTo(' ', UNCAPPED_CHARS)}`,
  repeatedTo('{{a ', UNCAPPED_CHARS),
  repeatedTo('{{', UNCAPPED_CHARS),
  repeatedTo('{{a.b', UNCAPPED_CHARS),
  `{{${repeatedTo('a.', UNCAPPED_CHARS)}`,
  repeatedTo('{{a}} ', UNCAPPED_CHARS),
];

describe('templates at 64 KiB', () => {
  const variables = { a: 'x', n1: { b: 'y' } };
  for (const template of TEMPLATES)
    it(`"${template.slice(0, 8)}..."`, () => {
      expect(bestTimeMs(() => renderTemplate(template, variables))).toBeLessThan(WORST_CASE_BUDGET_MS);
      expect(bestTimeMs(() => parseReferences(template))).toBeLessThan(WORST_CASE_BUDGET_MS);
      expect(bestTimeMs(() => filled(template, { name: 'Ana', fields: { a: 'x' } }))).toBeLessThan(
        WORST_CASE_BUDGET_MS,
      );
    });
});

describe('journey references read as before', () => {
  const token = fc.constantFrom('{{', '}}', '{', '}', 'a', 'n1.b', '.', ' ', '  ', '?', '\t', 'x-y', '_');
  it('on small templates', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 14 }), (tokens) => {
        const template = tokens.join('');
        const expected = [...template.matchAll(REFERENCE_BY_REGEX)].map((match) => ({
          path: match[1]!,
          optional: match[2] === '?',
          raw: match[0],
        }));
        expect(parseReferences(template)).toEqual(expected);
        expect(renderTemplate(template, { a: 'x', n1: { b: 'y' } })).toBe(
          template.replace(REFERENCE_BY_REGEX, (_raw, path: string) => ({ a: 'x', 'n1.b': 'y' })[path] ?? ''),
        );
      }),
      { numRuns: 3000 },
    );
  });
});
