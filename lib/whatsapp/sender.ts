/** Sends WhatsApp template messages. A real Business API provider plugs in behind this interface. */
export interface WhatsAppSender {
  /** Recorded with every message, so a simulated message can never pass for a real one. */
  readonly name: string;
  /** Sends one template message. The message key is the idempotency key: never two messages for one key. */
  sendTemplate(request: TemplateMessage): Promise<SentMessage>;
}

export interface TemplateMessage {
  messageKey: string;
  workspaceId: string;
  /** E.164 number. */
  to: string;
  templateName: string;
  language: string;
  parameters: string[];
}

export interface SentMessage {
  messageId: string;
  status: 'sent' | 'failed';
}
