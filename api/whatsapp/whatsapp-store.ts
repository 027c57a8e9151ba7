import type {
  Prisma,
  WhatsAppDirection,
  WhatsAppMessageStatus,
  WhatsAppTemplateStatus,
} from '../../generated/prisma/client';
import type { WhatsAppTemplateReview } from '../../lib/whatsapp/provider';
import type { AppServices } from '../app-services';

/**
 * The WhatsApp API's SQL (docs/features/whatsapp.md): senders, templates, campaign messaging, the inbox and sending.
 * The webhook's statements are in whatsapp-webhook-store.ts. `where` is findOwned's (api/http/owned.ts): an id and
 * the caller's workspace.
 */

type Db = AppServices['db'];
type OwnedWhere = { id: string; workspaceId: string };

export async function whatsAppSendersOfWorkspace(db: Db, workspaceId: string) {
  return db.whatsAppSender.findMany({
    where: { workspaceId },
    orderBy: [{ e164: 'asc' }, { id: 'asc' }],
  });
}

export async function whatsAppSenderWhere(db: Db, where: OwnedWhere) {
  return db.whatsAppSender.findFirst({ where });
}

/** A connected sender becomes DISCONNECTED; a disconnected one keeps its first disconnectedAt. */
export async function disconnectConnectedSender(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.whatsAppSender.updateMany({
    where: { id, workspaceId, status: 'CONNECTED' },
    data: { status: 'DISCONNECTED', disconnectedAt: new Date() },
  });
}

/** The Business Account of the workspace's earliest connected sender, or null. */
export async function earliestConnectedSender(db: Db, workspaceId: string) {
  return db.whatsAppSender.findFirst({
    where: { workspaceId, status: 'CONNECTED' },
    orderBy: [{ connectedAt: 'asc' }, { id: 'asc' }],
    select: { id: true, workspaceId: true, e164: true, connectionId: true, businessAccountId: true },
  });
}

export async function whatsAppTemplateWhere(db: Db, where: OwnedWhere) {
  return db.whatsAppTemplate.findFirst({ where });
}

export async function whatsAppTemplatesOfWorkspace(
  db: Db,
  workspaceId: string,
  query: { status?: WhatsAppTemplateStatus },
) {
  return db.whatsAppTemplate.findMany({
    where: { workspaceId, ...(query.status ? { status: query.status } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

export async function insertWhatsAppTemplate(db: Db, data: Prisma.WhatsAppTemplateUncheckedCreateInput) {
  return db.whatsAppTemplate.create({ data });
}

/** The template as its provider took it for review. */
export async function markTemplateSubmitted(
  db: Db,
  id: string,
  submitted: { id: string; status: WhatsAppTemplateStatus },
) {
  return db.whatsAppTemplate.update({
    where: { id },
    data: { providerTemplateId: submitted.id, status: submitted.status },
  });
}

/** A template whose submission did not finish (no provider id) is deleted. */
export async function deleteUnsubmittedTemplate(db: Db, id: string): Promise<void> {
  await db.whatsAppTemplate.deleteMany({ where: { id, providerTemplateId: null } });
}

/** Answers whether the template was there. */
export async function deleteWhatsAppTemplateWhere(db: Db, where: OwnedWhere): Promise<boolean> {
  return (await db.whatsAppTemplate.deleteMany({ where })).count > 0;
}

/** The provider's review, stored; statusUpdatedAt moves with it. Answers the row, or none when it is gone. */
export async function storeTemplateReview(db: Db, workspaceId: string, id: string, review: WhatsAppTemplateReview) {
  return db.whatsAppTemplate.updateManyAndReturn({
    where: { id, workspaceId },
    data: {
      status: review.status,
      rejectedReason: review.rejectedReason,
      qualityRating: review.qualityRating,
      statusUpdatedAt: new Date(),
    },
  });
}

export async function whatsAppCampaignSettingsOf(db: Db, campaignId: string) {
  return db.whatsAppCampaignSettings.findUnique({ where: { campaignId } });
}

export async function upsertWhatsAppCampaignSettings(
  db: Db,
  campaignId: string,
  data: {
    senderId: string;
    templateId: string;
    variables: Prisma.InputJsonValue;
    sendingWindow: Prisma.InputJsonValue;
  },
) {
  return db.whatsAppCampaignSettings.upsert({
    where: { campaignId },
    create: { campaignId, ...data },
    update: data,
  });
}

/** A page of the workspace's conversations of one inbox, latest activity first, with the total. */
export async function conversationsOfInboxPage(
  db: Db,
  workspaceId: string,
  query: { limit: number; offset: number; archived: boolean; senderId?: string },
) {
  const where = {
    workspaceId,
    archived: query.archived,
    ...(query.senderId ? { senderId: query.senderId } : {}),
  };
  const [rows, total] = await Promise.all([
    db.whatsAppConversation.findMany({
      where,
      orderBy: [{ lastMessageAt: 'desc' }, { id: 'desc' }],
      skip: query.offset,
      take: query.limit,
    }),
    db.whatsAppConversation.count({ where }),
  ]);
  return { rows, total };
}

export async function whatsAppConversationWhere(db: Db, where: OwnedWhere) {
  return db.whatsAppConversation.findFirst({ where });
}

/** Archived (archivedAt now) or not (archivedAt cleared); answers the row, or none when it is gone. */
export async function setConversationArchived(db: Db, workspaceId: string, id: string, archived: boolean) {
  const [updated] = await db.whatsAppConversation.updateManyAndReturn({
    where: { id, workspaceId },
    data: { archived, archivedAt: archived ? new Date() : null },
  });
  return updated;
}

/** The conversation's last inbound message's time, by sender and contact. */
export async function conversationLastInbound(db: Db, senderId: string, contactE164: string) {
  return db.whatsAppConversation.findUnique({
    where: { senderId_contactE164: { senderId, contactE164 } },
    select: { lastInboundAt: true },
  });
}

/** The latest `take` messages of the workspace matching the filters, newest first. */
export async function latestMessagesOfWorkspace(
  db: Db,
  workspaceId: string,
  query: {
    senderId?: string;
    conversationId?: string;
    direction?: WhatsAppDirection;
    status?: WhatsAppMessageStatus;
  },
  take: number,
) {
  return db.whatsAppMessage.findMany({
    where: { workspaceId, ...query },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take,
  });
}

/** The message the workspace sent with this Idempotency-Key, or null. */
export async function messageOfIdempotencyKey(db: Db, workspaceId: string, idempotencyKey: string) {
  return db.whatsAppMessage.findUnique({
    where: { workspaceId_idempotencyKey: { workspaceId, idempotencyKey } },
  });
}

/** A message never handed to its provider is deleted. */
export async function deleteUnsentMessage(db: Db, id: string): Promise<void> {
  await db.whatsAppMessage.deleteMany({
    where: { id, status: 'accepted', providerMessageId: null },
  });
}
