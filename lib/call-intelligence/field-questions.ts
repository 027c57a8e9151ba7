/**
 * Which question of a conversation asks for which extraction field. One rule, used both by the simulated
 * conversation (to decide what the lead answers to each question) and by the rule-based extractor (to
 * find the lead's answer for each field), so that the extractor reads back what the simulation said.
 *
 * A field's words are its name split at `_`, at lower-to-upper case changes and between letters and
 * digits, lower-cased, keeping words of three letters or more that are not filler (see FILLER); a name
 * with no such word keeps all its words. A question mentions a field by the number of the field's words
 * that appear in it as whole words (a trailing "s" ignored on both sides; two words of five letters or
 * more that begin with the same five letters count as one: deliver, delivery). Fields are taken in their
 * order; each goes to the question that mentions it most (the earliest on a tie) among the questions no
 * earlier field took. A field no question mentions is asked by none.
 */
const FILLER = new Set(['the', 'and', 'for', 'are', 'has', 'have', 'was', 'not', 'any', 'per', 'with', 'your', 'you']);

export function fieldWords(fieldName: string): string[] {
  const words = fieldName
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])|([0-9])([A-Za-z])/g, (_match, a?: string, b?: string, c?: string, d?: string) =>
      a !== undefined ? `${a} ${b}` : `${c} ${d}`,
    )
    .split(/[\s_]+/)
    .map((word) => word.toLowerCase())
    .filter((word) => word.length > 0);
  const significant = words.filter((word) => word.length >= 3 && !FILLER.has(word));
  return [...new Set((significant.length > 0 ? significant : words).map(singular))];
}

/** Whole words of a text, lower-cased, without a trailing "s". */
export function textWords(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(singular));
}

const sameWord = (a: string, b: string) =>
  a === b || (a.length >= 5 && b.length >= 5 && a.slice(0, 5) === b.slice(0, 5));

function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word;
}

/** How many of the field's words the question holds (0: it does not mention the field). */
export function mentionScore(fieldName: string, question: string): number {
  const words = [...textWords(question)];
  return fieldWords(fieldName).filter((word) => words.some((other) => sameWord(word, other))).length;
}

/** For each field (by index), the index of the question that asks for it, or undefined. */
export function matchFieldsToQuestions(
  fieldNames: readonly string[],
  questions: readonly string[],
): Array<number | undefined> {
  const taken = new Set<number>();
  return fieldNames.map((fieldName) => {
    let best: { index: number; score: number } | undefined;
    questions.forEach((question, index) => {
      if (taken.has(index)) return;
      const score = mentionScore(fieldName, question);
      if (score > 0 && (best === undefined || score > best.score)) best = { index, score };
    });
    if (best) taken.add(best.index);
    return best?.index;
  });
}
