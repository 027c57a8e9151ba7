// A workspace's base URLs for outside services (lib/http/base-url.ts, docs/hostile-input.md): capped, and their
// trailing slashes dropped in one scan from the end.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BASE_URL_MAX_CHARS, baseUrlSchema, withoutTrailingSlashes } from '../../lib/http/base-url';
import { carrierBaseUrlSchema } from '../../lib/carrier-connections/connections';
import { sheetBaseUrlSchema } from '../../lib/sheets/connections';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

describe('base URLs', () => {
  const atCap = `https://x.example/${repeatedTo('/', BASE_URL_MAX_CHARS - 19)}a`;

  it('at the cap, slashes all along: checked within the budget; one over refused', () => {
    expect(atCap).toHaveLength(BASE_URL_MAX_CHARS);
    expect(baseUrlSchema.parse(atCap)).toBe(atCap);
    expect(baseUrlSchema.parse(`https://x.example/${'/'.repeat(100)}`)).toBe('https://x.example');
    expect(bestTimeMs(() => carrierBaseUrlSchema.safeParse(atCap))).toBeLessThan(WORST_CASE_BUDGET_MS);
    expect(carrierBaseUrlSchema.safeParse(`${atCap}b`).success).toBe(false);
    expect(sheetBaseUrlSchema.parse('https://sheets.example/v4//')).toBe('https://sheets.example/v4/');
  });

  it('withoutTrailingSlashes on 64 KiB of slashes not at the end', () => {
    const text = `${repeatedTo('/', UNCAPPED_CHARS - 1)}a`;
    expect(withoutTrailingSlashes(text)).toBe(text);
    expect(bestTimeMs(() => withoutTrailingSlashes(text))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });

  it('drops what /\\/+$/ dropped', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('/', 'a', ':', '//'), { maxLength: 16 }), (parts) => {
        const url = parts.join('');
        expect(withoutTrailingSlashes(url)).toBe(url.replace(/\/+$/, ''));
      }),
      { numRuns: 2000 },
    );
  });
});
