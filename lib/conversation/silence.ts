import { ruleLanguageOf } from './utterance';

/**
 * What an agent says when the lead is silent (docs/features/conversation/relay.md#silence), in the languages the
 * dialogue rules read (others: English): once, whether they are still there; twice in a row, goodbye.
 */
const SILENCE_LINES = {
  en: {
    stillThere: 'Are you still there?',
    goodbye: "It seems this isn't a good time. We'll try another time. Goodbye.",
  },
  es: {
    stillThere: '¿Sigue ahí?',
    goodbye: 'Parece que no es un buen momento. Lo intentaremos en otra ocasión. Adiós.',
  },
};

/** The agent's words after `silences` silences in a row (1: still there; 2 or more: goodbye, and the end). */
export function silenceLine(language: string | undefined, silences: number): { text: string; ends: boolean } {
  const lines = SILENCE_LINES[ruleLanguageOf(language ?? 'en')];
  return silences >= 2 ? { text: lines.goodbye, ends: true } : { text: lines.stillThere, ends: false };
}
