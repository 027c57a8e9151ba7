/**
 * The languages the dialogue rules are written in (docs/features/conversation/rules.md#languages). An agent's language is
 * a BCP 47 tag (lib/agents/agent-definition.ts); its primary subtag picks the rules, and any other language falls back
 * to English's: the carrier's recogniser transcribes what it hears, and English words are the likeliest in any call.
 */
export const RULE_LANGUAGES = ['en', 'es'] as const;
export type RuleLanguage = (typeof RULE_LANGUAGES)[number];

export function ruleLanguageOf(languageTag: string): RuleLanguage {
  let primary: string;
  try {
    primary = new Intl.Locale(languageTag).language;
  } catch {
    return 'en';
  }
  return (RULE_LANGUAGES as readonly string[]).includes(primary) ? (primary as RuleLanguage) : 'en';
}

/**
 * An utterance as the rules read it: lower case, without accents (speech recognisers and typists drop them: "mas" is
 * "más"), without apostrophes ("don't" is "dont"), "a.m."/"p.m." as "am"/"pm", a clock's "3.30" or "3h30" as "3:30",
 * digits apart from the letters after them ("3pm" is "3 pm"), every other punctuation mark a space, single spaces.
 */
export function normaliseUtterance(utterance: string): string {
  return utterance
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’`´]/g, '')
    .replace(/\b([ap])\s?\.\s?m\b\.?/g, '$1m')
    .replace(/(\d)\s?[.h]\s?(\d\d)\b/g, '$1:$2')
    .replace(/(\d)([a-z])/g, '$1 $2')
    .replace(/[^a-z0-9:]+|:(?!\d)|(?<!\d):/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Phrases as one regular-expression alternation, longest first: an alternation takes the first alternative that
 * matches, so at any position the longest phrase said is the one read ("of course not" before "of course", "forty
 * five" before "forty"). The phrases are the rules' own word lists, written without special characters.
 */
export function alternation(phrases: readonly string[]): string {
  return [...phrases].sort((a, b) => b.length - a.length).join('|');
}
