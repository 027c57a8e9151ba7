import type { WhatsAppInboundMessage } from './webhook';

/**
 * Whether an inbound WhatsApp message asks not to be messaged again (docs/features/whatsapp/sending.md#opt-out-replies):
 * the whole message is an opt-out keyword, or it is the reply of a template's opt-out quick-reply button. The sender's
 * workspace then lists the contact's number on its Do-Not-Call list (api/whatsapp/whatsapp-webhook-store.ts).
 *
 * A keyword is read case-, accent-, space- and punctuation-insensitively ("Stop!", " stop ", "Arrêt", "opt out"), and
 * only as the whole message: "don't stop" or "stop by tomorrow" is no opt-out. The keywords are the carriers' standard
 * SMS opt-out words (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE) and their equivalents in the
 * languages the product's agents speak most (Spanish, French, Portuguese, Italian, German).
 */
const OPT_OUT_KEYWORDS: ReadonlySet<string> = new Set(
  [
    // English (the SMS standard), and Meta's marketing opt-out button ("Stop promotions").
    'stop',
    'stop all',
    'unsubscribe',
    'cancel',
    'end',
    'quit',
    'opt out',
    'revoke',
    'stop promotions',
    // Spanish
    'baja',
    'darme de baja',
    'dar de baja',
    'cancelar',
    'parar',
    'detener',
    'alto',
    // French
    'arret',
    'arreter',
    'desabonner',
    'desinscrire',
    // Portuguese
    'sair',
    'descadastrar',
    'cancelar inscricao',
    // Italian, German
    'basta',
    'disiscriviti',
    'abmelden',
    'stopp',
  ].map((keyword) => keyword.replace(/ /g, '')),
);

/**
 * The longest keyword is far below this: a longer message is not read at all, so the check costs at most this many
 * characters whatever the message's length (docs/hostile-input.md).
 */
export const OPT_OUT_REPLY_MAX_CHARS = 64;

/** The text as a keyword is compared: no accents, lower case, no spaces, punctuation or symbols. */
function keywordOf(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\p{M}\s\p{P}\p{S}]/gu, '')
    .toLowerCase();
}

/** Whether the whole text is an opt-out keyword. */
export function isOptOutKeyword(text: string): boolean {
  return text.length <= OPT_OUT_REPLY_MAX_CHARS && OPT_OUT_KEYWORDS.has(keywordOf(text));
}

/**
 * A text message that is a keyword, or a button reply (a template's quick-reply button: `button.payload`, Meta's
 * marketing opt-out button answering "Stop promotions" as its payload and text; an interactive button's title) that is
 * one.
 */
export function isOptOutReply(message: WhatsAppInboundMessage): boolean {
  const said = [
    message.text?.body,
    message.button?.payload,
    message.button?.text,
    message.interactive?.button_reply?.title,
  ];
  return said.some((text) => text !== undefined && isOptOutKeyword(text));
}
