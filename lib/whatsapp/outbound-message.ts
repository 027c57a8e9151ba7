import { randomUUID } from 'node:crypto';
import type { Prisma, WhatsAppTemplateCategory } from '../../generated/prisma/client';
import { InsufficientCreditsError } from '../credits/credit-errors';
import { holdWhatsAppMessage } from '../credits/whatsapp-billing';
import type { CreditActor } from '../credits/ledger-store';
import type { Database } from '../database';
import { prismaSql } from '../run-sql';
import { renderTemplateBody } from './template-body';
import type { SimulatorsSetting } from '../simulators';
import { isFreeSimulatedMessage } from './simulator-stand-in';

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
 * and holds its price, in the caller's transaction (docs/features/whatsapp/sending.md): accepted, not yet handed to
 * the provider. InsufficientCreditsError: nothing recorded. The caller then starts its workflow
 * (workflows/whatsapp/whatsapp-message.ts, id from lib/temporal/workflow-ids.ts). Where SIMULATORS is enabled
 * (development), a message the simulated provider carries holds nothing: it is never charged.
 */
export async function recordOutboundMessage(
  tx: Prisma.TransactionClient,
  message: OutboundMessage,
  actor: CreditActor,
  simulators: SimulatorsSetting,
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
  if (!(await isFreeSimulatedMessage(tx, simulators, message.senderId)))
    await holdWhatsAppMessage(
      prismaSql(tx),
      { workspaceId: message.workspaceId, messageId: message.id, category: message.category },
      actor,
    );
  return row;
}

/** The id of the workspace's message recorded under this idempotency key, if there is one. */
export async function messageIdByKey(db: Database, workspaceId: string, idempotencyKey: string) {
  const message = await db.whatsAppMessage.findUnique({
    where: { workspaceId_idempotencyKey: { workspaceId, idempotencyKey } },
    select: { id: true },
  });
  return message?.id ?? null;
}

/** A template message that a workflow sends once under its key (a campaign's lead, a journey visit, an order). */
export interface TemplateMessage {
  workspaceId: string;
  senderId: string;
  /** E.164. */
  to: string;
  template: { id: string; category: WhatsAppTemplateCategory; body: string };
  /** The template's variables' values, in order. */
  parameters: string[];
  idempotencyKey: string;
  campaignId?: string | null;
  leadId?: string | null;
  journeyRunId?: string | null;
}

/**
 * Records the template message of `idempotencyKey` with its price held (recordOutboundMessage), after the
 * caller's own checks. Raced by another attempt of the same key (an activity's retry): that one's message.
 * A balance that cannot hold the price: `insufficient_credits`, nothing recorded.
 */
export async function recordTemplateMessageOnce(
  db: Database,
  { template, ...message }: TemplateMessage,
  actor: CreditActor,
  simulators: SimulatorsSetting,
): Promise<{ messageId: string } | { refused: 'insufficient_credits' }> {
  const id = randomUUID();
  try {
    await db.$transaction((tx) =>
      recordOutboundMessage(
        tx,
        {
          ...message,
          id,
          type: 'template',
          templateId: template.id,
          category: template.category,
          body: renderTemplateBody(template.body, message.parameters),
        },
        actor,
        simulators,
      ),
    );
    return { messageId: id };
  } catch (error) {
    if (error instanceof InsufficientCreditsError) return { refused: 'insufficient_credits' };
    const other = await messageIdByKey(db, message.workspaceId, message.idempotencyKey);
    if (other) return { messageId: other };
    throw error;
  }
}
