import { ruleLanguageOf } from '../../lib/conversation/utterance';

/**
 * What transfer_to_human does alike on both carriers (docs/features/conversation/tools.md#transfer_to_human): how long
 * the human's phone rings, what the lead hears when nobody answered it, and what a warm transfer's human hears first.
 */

/** How long the human's phone rings before the transfer counts as not answered. */
export const TRANSFER_RING_SECONDS = 20;

/** What the lead hears when nobody took the transfer, in the languages the dialogue rules read (others: English). */
const NOBODY_ANSWERED = {
  en: "I'm sorry, nobody could take your call right now. We'll call you back. Goodbye.",
  es: 'Lo siento, ahora mismo nadie ha podido atender su llamada. Le volveremos a llamar. Adiós.',
};

export const nobodyAnsweredLine = (language: string) => NOBODY_ANSWERED[ruleLanguageOf(language)];

/** What a warm transfer's human hears before the lead is bridged: an announcement, then the summary (if any). */
const WHISPER = {
  en: { intro: 'Transferred call.', none: 'No summary was given.', connecting: 'Connecting you now.' },
  es: { intro: 'Llamada transferida.', none: 'No hay resumen.', connecting: 'Le conecto ahora.' },
};

export function whisperLine(summary: string | null, language: string): string {
  const words = WHISPER[ruleLanguageOf(language)];
  return `${words.intro} ${summary ?? words.none} ${words.connecting}`;
}
