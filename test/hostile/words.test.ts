// Word lists read from tenant text (docs/hostile-input.md): a knowledge search's query (lib/knowledge/knowledge-store.ts
// searchTextOf) and a dictionary's terms (lib/dictionaries/dictionary-terms.ts): single passes, linear already; an
// inbound WhatsApp message read for an opt-out keyword (lib/whatsapp/opt-out-reply.ts): not read past 64 characters.
import { describe, expect, it } from 'vitest';
import { normaliseTerms } from '../../lib/dictionaries/dictionary-terms';
import { searchTextOf } from '../../lib/knowledge/knowledge-store';
import { isOptOutKeyword } from '../../lib/whatsapp/opt-out-reply';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

describe('word lists at 64 KiB', () => {
  for (const unit of ['a ', 'or ', '-', ' \t\n', 'é'])
    it(`"${unit}" over and over`, () => {
      const text = repeatedTo(unit, UNCAPPED_CHARS);
      expect(bestTimeMs(() => searchTextOf(text))).toBeLessThan(WORST_CASE_BUDGET_MS);
      const { problems } = normaliseTerms([text]);
      expect(problems.length).toBeGreaterThan(0); // longer than a term may be, whitespace or not
      expect(bestTimeMs(() => normaliseTerms([text, text]))).toBeLessThan(WORST_CASE_BUDGET_MS);
      expect(isOptOutKeyword(text)).toBe(false);
      expect(bestTimeMs(() => isOptOutKeyword(text))).toBeLessThan(WORST_CASE_BUDGET_MS);
    });
});
