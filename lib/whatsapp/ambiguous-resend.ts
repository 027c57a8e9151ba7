/**
 * What becomes of an ambiguous WhatsApp send (its answer lost) whose status never came within
 * WHATSAPP_RESEND_AFTER_SECONDS (docs/features/whatsapp/sending.md#no-message-twice): `never` resent, marked unknown (the
 * default: a message is never sent twice); or resent once `after-later-status`, when a later message of the same
 * sender's number has had a status since. Statuses are not ordered across messages, so that proves nothing about the
 * earlier one: the opt-in rule may send a message twice, with the chance the page states.
 */
export const AMBIGUOUS_RESEND_RULES = ['never', 'after-later-status'] as const;
export type AmbiguousResendRule = (typeof AMBIGUOUS_RESEND_RULES)[number];
