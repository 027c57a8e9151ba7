import type { RunSql } from '../run-sql';
import { holdIn, settleHold } from './holds';
import type { CreditActor, CreditStore } from './ledger-store';
import { creditString } from './money';
import { whatsAppMessagePriceUnits, type WhatsAppCategory } from './price-table';

/**
 * How a WhatsApp message is billed (docs/features/credits.md, docs/features/whatsapp.md "Billing"): a hold of its price
 * (by the template's category; free-form text inside the customer-service window is priced as utility) when the message
 * is recorded, before the provider has it; posted at that price when the provider reports it delivered or read; voided
 * when it fails (refused by the provider, or reported failed).
 */
export const whatsAppMessageHoldKey = (messageId: string) => `whatsapp_message:${messageId}`;

/** referenceType of a message's ledger entries: the WhatsAppMessage's id is the referenceId. */
export const WHATSAPP_MESSAGE_REFERENCE = 'whatsapp_message';

/** The category a message is priced by: its template's, or utility for free-form text. */
export const pricedCategory = (category: WhatsAppCategory | null): WhatsAppCategory => category ?? 'utility';

/** Takes the message's hold inside the transaction that records it; InsufficientCreditsError: not recorded. */
export function holdWhatsAppMessage(
  sql: RunSql,
  message: { workspaceId: string; messageId: string; category: WhatsAppCategory | null },
  actor: CreditActor,
) {
  return holdIn(sql, {
    workspaceId: message.workspaceId,
    heldFor: 'whatsapp_message',
    amount: creditString(whatsAppMessagePriceUnits(pricedCategory(message.category))),
    reference: { type: WHATSAPP_MESSAGE_REFERENCE, id: message.messageId },
    actor,
    idempotencyKey: whatsAppMessageHoldKey(message.messageId),
  });
}

/**
 * Settles a message's hold: posted at what it holds when the message was delivered (or read), voided
 * when it failed. Idempotent, as postHold and voidHold; a message without a hold is left alone (null).
 */
export function settleWhatsAppMessageHold(
  store: CreditStore,
  message: { workspaceId: string; messageId: string; delivered: boolean },
  actor: CreditActor,
) {
  const request = {
    workspaceId: message.workspaceId,
    idempotencyKey: whatsAppMessageHoldKey(message.messageId),
    actor,
  };
  return settleHold(store, request, (heldUnits) => (message.delivered ? heldUnits : 0));
}
