/*
 * What orderNotificationWorkflow (workflows/commerce/order-notification.ts), a rule's WhatsApp message for one
 * order, is started with and answers: types only, so that whoever starts it (lib/temporal/) loads no workflow code.
 */

export interface OrderNotificationInput {
  ruleId: string;
  orderId: string;
}

/** Why a notification sent nothing (docs/features/commerce.md#order-notifications). */
export type OrderNotificationSkip =
  | 'rule_gone'
  | 'rule_disabled'
  | 'order_gone'
  | 'order_cancelled'
  | 'no_customer_phone'
  | 'template_not_approved'
  | 'preset_mismatch'
  | 'no_connected_sender'
  | 'do_not_call'
  | 'insufficient_credits';

export type OrderNotificationResult =
  | { status: 'handed_over'; messageId: string }
  | { status: 'failed'; messageId: string; errorCode: number | null }
  | { status: 'skipped'; reason: OrderNotificationSkip };
