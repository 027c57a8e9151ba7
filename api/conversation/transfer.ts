import { ruleLanguageOf } from '../../lib/conversation/utterance';

/**
 * What transfer_to_human does alike on both carriers (docs/features/conversation/tools.md#transfer_to_human): how long
 * the human's phone rings, and what the lead hears when nobody answered it.
 */

/** How long the human's phone rings before the transfer counts as not answered. */
export const TRANSFER_RING_SECONDS = 20;

/** What the lead hears when nobody took the transfer, in the languages the dialogue rules read (others: English). */
const NOBODY_ANSWERED = {
  en: "I'm sorry, nobody could take your call right now. We'll call you back. Goodbye.",
  es: 'Lo siento, ahora mismo nadie ha podido atender su llamada. Le volveremos a llamar. Adiós.',
};

export const nobodyAnsweredLine = (language: string) => NOBODY_ANSWERED[ruleLanguageOf(language)];
