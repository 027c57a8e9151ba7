/**
 * A text as the words compared and counted by the speech engine: lower case (locale-independent), every
 * character that is not a letter, a digit or an apostrophe inside a word is a word break (so "follow-up" is
 * "follow up" and "Shoes." is "shoes"), apostrophes at a word's edges are dropped ("'til" -> "til").
 */
export function normaliseWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^\p{L}\p{N}']+/u)
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word.length > 0);
}
