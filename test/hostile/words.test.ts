// Word lists read from tenant text (docs/hostile-input.md): a knowledge search's query (lib/knowledge/knowledge-store.ts
// searchTextOf) and a dictionary's terms (lib/dictionaries/dictionary-terms.ts): single passes, linear already; an
// inbound WhatsApp message read for an opt-out keyword (lib/whatsapp/opt-out-reply.ts): not read past 64 characters.
import { describe, expect, it } from 'vitest';
import { DICTIONARY_LIMITS, normaliseTerms } from '../../lib/dictionaries/dictionary-terms';
import { pronunciationsOf, spokenPiecesOf } from '../../lib/dictionaries/pronunciations';
import { AGENT_LIMITS } from '../../lib/agents/agent-definition';
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

describe('pronunciations at the caps', () => {
  it("an agent's most terms, each a long run of one word before its own last word, over 64 KiB of that word", () => {
    // Every term shares the longest prefix a term may hold ("a a a ... a"), so every token of the text walks the trie as
    // deep as a term goes and then fails: the most work a text can make per token.
    const prefix = 'a '.repeat(44);
    const totalChars = AGENT_LIMITS.dictionaries * DICTIONARY_LIMITS.totalCharacters;
    const terms: string[] = [];
    for (let used = 0, index = 0; used < totalChars; index++) {
      const term = `${prefix}w${index} => x`.slice(0, DICTIONARY_LIMITS.termLength);
      terms.push(term);
      used += term.length;
    }
    // Each term is one a dictionary accepts (a dictionary's worth of them, within its characters).
    const perDictionary = Math.floor(DICTIONARY_LIMITS.totalCharacters / DICTIONARY_LIMITS.termLength);
    expect(normaliseTerms(terms.slice(0, perDictionary)).problems).toEqual([]);
    const text = repeatedTo('a ', UNCAPPED_CHARS);
    expect(spokenPiecesOf(text, pronunciationsOf(terms))).toEqual([{ text }]);
    expect(bestTimeMs(() => spokenPiecesOf(text, pronunciationsOf(terms)))).toBeLessThan(WORST_CASE_BUDGET_MS);
    const matched = repeatedTo(`${prefix}w1 `, UNCAPPED_CHARS);
    expect(bestTimeMs(() => spokenPiecesOf(matched, pronunciationsOf(terms)))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });
});
