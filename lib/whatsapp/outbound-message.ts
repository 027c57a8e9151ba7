import type { Prisma, WhatsAppTemplateCategory } from '../../generated/prisma/client';
import { holdWhatsAppMessage } from '../credits/whatsapp-billing';
import type { CreditActor } from '../credits/ledger-store';
import { prismaSql } from '../run-sql';

export interface OutboundMessage {
  id: string;
  workspaceId: string;
  senderId: string;
  /** E.164. */
  to: string;
  type: 'template' | 'text';
  templateId: string | null;
  category: WhatsAppTemplateCategory | null;
  /** What the message shows: a template's body with its variables filled, or the text. */
  body: string;
  /** A template's variables' values, in order. */
  parameters: string[] | null;
  idempotencyKey: string | null;
  campaignId?: string | null;
  leadId?: string | null;
  journeyRunId?: string | null;
}

/**
 * Records an outbound message in the contact's conversation with the sender (made on the first message)
 * and holds its price, in the caller's transaction (README "WhatsApp"): accepted, not yet handed to the
 * provider. InsufficientCreditsError: nothing recorded. The caller then starts its workflow
 * (workflows/whatsapp-message.ts, id from lib/workflow-ids.ts).
 */
export async function recordOutboundMessage(
  tx: Prisma.TransactionClient,
  message: OutboundMessage,
  actor: CreditActor,
) {
  const conversation = await tx.whatsAppConversation.upsert({
    where: { senderId_contactE164: { senderId: message.senderId, contactE164: message.to } },
    create: { workspaceId: message.workspaceId, senderId: message.senderId, contactE164: message.to },
    update: { lastMessageAt: new Date() },
    select: { id: true },
  });
  const row = await tx.whatsAppMessage.create({
    data: {
      id: message.id,
      workspaceId: message.workspaceId,
      conversationId: conversation.id,
      senderId: message.senderId,
      direction: 'outbound',
      type: message.type,
      templateId: message.templateId,
      category: message.category,
      body: message.body,
      parameters: message.parameters ?? undefined,
      status: 'accepted',
      idempotencyKey: message.idempotencyKey,
      campaignId: message.campaignId ?? null,
      leadId: message.leadId ?? null,
      journeyRunId: message.journeyRunId ?? null,
    },
  });
  await holdWhatsAppMessage(
    prismaSql(tx),
    { workspaceId: message.workspaceId, messageId: message.id, category: message.category },
    actor,
  );
  return row;
}
