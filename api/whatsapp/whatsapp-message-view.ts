import { z } from 'zod';
import type { WhatsAppMessage } from '../../generated/prisma/client';

const at = (what: string) => z.iso.datetime().nullable().describe(`${what}; null until then (or never).`);

/** A WhatsApp message as the API answers it (GET /whatsapp/messages, and a send's answer). */
export const whatsAppMessageSchema = z.object({
  id: z.string().uuid(),
  conversationId: z.string().uuid(),
  senderId: z.string().uuid().describe('The WhatsApp sender (GET /whatsapp/senders) it went from or came to.'),
  direction: z.enum(['inbound', 'outbound']),
  type: z.string().describe("outbound: template or text; inbound: the provider's message type (text, image, ...)."),
  templateId: z.string().uuid().nullable().describe('The template an outbound template message was sent with.'),
  category: z
    .enum(['marketing', 'utility', 'authentication'])
    .nullable()
    .describe("A template message's category, which prices it; null for free-form text and inbound messages."),
  body: z.string().describe("The text as sent (the template's body with its variables filled) or as received."),
  status: z
    .enum(['accepted', 'sent', 'delivered', 'read', 'failed', 'received'])
    .describe(
      'outbound: accepted (recorded, not yet taken by the provider), sent, delivered, read, or failed; it only moves forward. inbound: received.',
    ),
  providerMessageId: z
    .string()
    .nullable()
    .describe("The provider's id of the message (wamid...); null until it took it."),
  errorCode: z.number().int().nullable().describe("failed: the provider's error code (e.g. 131026 undeliverable)."),
  errorTitle: z.string().nullable().describe("failed: the provider's error title."),
  campaignId: z.string().uuid().nullable().describe('The campaign that sent it; null otherwise.'),
  leadId: z.string().uuid().nullable().describe("The campaign's lead it was sent to; null otherwise."),
  createdAt: z.iso.datetime().describe('When it was recorded (sent by us, or received).'),
  sentAt: at('outbound: when the provider reported it sent'),
  deliveredAt: at('outbound: when it was reported delivered'),
  readAt: at('outbound: when it was reported read'),
  failedAt: at('outbound: when it was reported failed'),
  simulated: z
    .boolean()
    .describe(
      "true when its sender is carried by the simulated WhatsApp provider (the sender's provider simulated, docs/configuration.md#simulators): nobody was messaged and its statuses were invented. Read from the sender as it is now.",
    ),
});

export type WhatsAppMessageView = z.infer<typeof whatsAppMessageSchema>;

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** `simulated`: its sender is carried by the simulated provider (lib/whatsapp/senders.ts simulatedSenderIds). */
export function whatsAppMessageView(message: WhatsAppMessage, simulated: boolean): WhatsAppMessageView {
  return {
    id: message.id,
    conversationId: message.conversationId,
    senderId: message.senderId,
    direction: message.direction,
    type: message.type,
    templateId: message.templateId,
    category: message.category,
    body: message.body,
    status: message.status,
    providerMessageId: message.providerMessageId,
    errorCode: message.errorCode,
    errorTitle: message.errorTitle,
    campaignId: message.campaignId,
    leadId: message.leadId,
    createdAt: message.createdAt.toISOString(),
    sentAt: iso(message.sentAt),
    deliveredAt: iso(message.deliveredAt),
    readAt: iso(message.readAt),
    failedAt: iso(message.failedAt),
    simulated,
  };
}
