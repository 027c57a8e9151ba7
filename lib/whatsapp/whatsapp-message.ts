/*
 * What whatsAppMessageWorkflow (workflows/whatsapp/whatsapp-message.ts), one outbound message's handover to
 * the provider, is started with and answers: types only, so that whoever starts it (lib/temporal/) loads no
 * workflow code.
 */

export interface WhatsAppMessageInput {
  messageId: string;
}

export type WhatsAppMessageResult =
  | { status: 'handed_over'; providerMessageId: string | null }
  | { status: 'failed'; errorCode: number | null }
  /** The send's answer was lost and nothing resolved it (docs/features/whatsapp/sending.md#no-message-twice): never sent twice. */
  | { status: 'unknown' };
