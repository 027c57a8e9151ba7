import type { KnowledgePassage } from './engine';
import { normaliseUtterance, ruleLanguageOf, type RuleLanguage } from './utterance';

/**
 * How the script engine answers a question its script does not cover from the agent's knowledge
 * (docs/features/conversation/rules.md#questions): whether the lead asked something, and the best passage of the
 * agent's documents (lib/knowledge/knowledge-store.ts) shortened to what an agent can say in a sentence or two.
 * Pure: the engine searches, this reads.
 */

/** The most characters of a knowledge answer the agent says (about two spoken sentences, 15 seconds at most). */
export const MAX_SPOKEN_ANSWER_CHARS = 280;

/**
 * The characters of a passage read at most (docs/hostile-input.md): a passage holds 100 to 200 words
 * (docs/features/knowledge-search.md#passages), far fewer than this; a document of one endless word is cut here.
 */
export const MAX_PASSAGE_CHARS_READ = 4000;

/** Sentences of a passage weighed at most. */
const MAX_SENTENCES = 40;

/** Words that open a question, normalised (lib/conversation/utterance.ts), by rule language. */
const QUESTION_OPENINGS: Record<RuleLanguage, RegExp> = {
  en: /^(?:(?:so|and|but|ok|okay|well|um|uh|sorry|excuse me|hi|hello) )*(?:what|whats|how|hows|where|wheres|when|which|who|whos|whom|whose|why|is there|are there|is it|is that|is this|are you|are they|do you|do they|does|did you|can you|can i|could you|could i|will you|will it|would you|would it|should i|tell me|i want to know|id like to know|i would like to know|i wonder|i was wondering|explain)\b/,
  es: /^(?:(?:y|pero|bueno|oiga|disculpe|perdone|hola) )*(?:que|como|donde|cuando|cual|cuales|cuanto|cuanta|cuantos|cuantas|quien|quienes|por que|me puede decir|me podria decir|digame|quiero saber|me gustaria saber|una pregunta)\b/,
};

/**
 * Whether the lead asked something: a question mark (the carriers' recognisers punctuate: "?", Spanish "¿"), or an
 * utterance opening with a question's words in the agent's rule language ("what", "how", "do you", "tell me";
 * "qué", "cómo", "dígame"). Linear in the utterance (at most MAX_VOICE_PROMPT_CHARS, the socket's cap).
 */
export function asksSomething(utterance: string, language: string): boolean {
  if (/[?¿]/.test(utterance)) return true;
  return QUESTION_OPENINGS[ruleLanguageOf(language)].test(normaliseUtterance(utterance));
}

/** What a lead says to hear the agent's last words again, normalised, by rule language. */
const REPEAT_REQUESTS: Record<RuleLanguage, ReadonlySet<string>> = {
  en: new Set([
    'what',
    'huh',
    'sorry',
    'sorry what',
    'pardon',
    'pardon me',
    'excuse me',
    'come again',
    'say again',
    'say that again',
    'what did you say',
    'i didnt hear you',
    'i didnt catch that',
    'repeat',
    'repeat that',
    'repeat that please',
    'can you repeat that',
    'could you repeat that',
    'can you say that again',
    'could you say that again',
  ]),
  es: new Set([
    'que',
    'como',
    'perdon',
    'disculpe',
    'como dice',
    'que dice',
    'repita',
    'repitame',
    'me lo repite',
    'puede repetir',
    'puede repetirlo',
    'no le he oido',
    'no le oi',
  ]),
};

/**
 * Whether the lead only asked to hear the agent again ("sorry?", "could you repeat that?", "¿cómo?"): the whole
 * utterance, normalised and without "please"/"por favor", is one of the phrases of its rule language, or one after
 * "sorry"/"perdón" ("sorry, I didn't catch that").
 */
export function asksToRepeat(utterance: string, language: string): boolean {
  const text = normaliseUtterance(utterance)
    .replace(/\b(?:please|por favor)\b/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const phrases = REPEAT_REQUESTS[ruleLanguageOf(language)];
  return phrases.has(text) || phrases.has(text.replace(/^(?:sorry|perdon|disculpe) /, ''));
}

/** The words of a text worth matching, normalised, each once (short words say little about the subject). */
const contentWords = (text: string) =>
  new Set(
    normaliseUtterance(text)
      .split(' ')
      .filter((word) => word.length >= 3),
  );

/** Cut at the last word boundary within `max` characters, marked as cut. */
function cutToWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const boundary = cut.lastIndexOf(' ');
  return `${(boundary > max / 2 ? cut.slice(0, boundary) : cut).replace(/[\s,;:.-]+$/u, '')}…`;
}

/**
 * What the agent says of a passage in answer to a question: the passage's sentence sharing the most words with the
 * question (the first of equals), with the next one when both fit in MAX_SPOKEN_ANSWER_CHARS; one longer than that
 * is cut at a word. Line breaks and runs of spaces are one space. Empty: the passage says nothing.
 * Linear in the passage's first MAX_PASSAGE_CHARS_READ characters and the question.
 */
export function spokenAnswerOf(passage: Pick<KnowledgePassage, 'text'>, question: string): string {
  const text = passage.text.slice(0, MAX_PASSAGE_CHARS_READ).replace(/\s+/g, ' ').trim();
  if (!text) return '';
  const sentences = (text.match(/[^.!?]+(?:[.!?]+|$)/g) ?? [text])
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '')
    .slice(0, MAX_SENTENCES);
  const asked = contentWords(question);
  let best = 0;
  let bestScore = -1;
  sentences.forEach((sentence, index) => {
    let score = 0;
    for (const word of contentWords(sentence)) if (asked.has(word)) score += 1;
    if (score > bestScore) [best, bestScore] = [index, score];
  });
  const first = sentences[best]!;
  const next = sentences[best + 1];
  if (next !== undefined && first.length + 1 + next.length <= MAX_SPOKEN_ANSWER_CHARS) return `${first} ${next}`;
  return cutToWords(first, MAX_SPOKEN_ANSWER_CHARS);
}
