import type { WhatsAppConversation, WhatsAppDirection, WhatsAppMessageStatus } from '../../generated/prisma/client';
import { customerServiceWindow } from '../../lib/whatsapp/customer-service-window';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { simulatedSenderIds } from '../../lib/whatsapp/senders';
import { whatsAppMessageView } from './whatsapp-message-view';
import {
  conversationsOfInboxPage,
  latestMessagesOfWorkspace,
  setConversationArchived,
  whatsAppConversationWhere,
} from './whatsapp-store';

/** GET /whatsapp/messages answers at most this many: the latest (spec 4.1, a fixed-size recent list). */
export const LATEST_WHATSAPP_MESSAGES = 200;

export interface ConversationQuery {
  limit: number;
  offset: number;
  archived: boolean;
  senderId?: string;
}

/** The workspace's conversations of one inbox (archived or not), latest activity first, a page and the total. */
export async function listWhatsAppConversations({ db }: AppServices, principal: Principal, query: ConversationQuery) {
  const { rows, total } = await conversationsOfInboxPage(db, principal.workspaceId, query);
  const now = new Date();
  return { items: rows.map((row) => whatsAppConversationView(row, now)), total };
}

export async function findOwnedWhatsAppConversation({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => whatsAppConversationWhere(db, where));
}

/**
 * Archives or unarchives a conversation: the workspace's own inbox state, nothing reaches the provider.
 * Idempotent: archiving an archived conversation keeps its first archivedAt; unarchiving clears it.
 */
export async function setWhatsAppConversationArchived(
  services: AppServices,
  principal: Principal,
  id: string,
  archived: boolean,
) {
  const conversation = await findOwnedWhatsAppConversation(services, principal, id);
  if (conversation.archived === archived) return conversation;
  const updated = await setConversationArchived(services.db, principal.workspaceId, id, archived);
  return findOwned(principal, id, async () => updated);
}

export interface MessageQuery {
  senderId?: string;
  conversationId?: string;
  direction?: WhatsAppDirection;
  status?: WhatsAppMessageStatus;
}

/** The latest LATEST_WHATSAPP_MESSAGES messages of the workspace matching the filters, newest first. */
export async function latestWhatsAppMessages({ db }: AppServices, principal: Principal, query: MessageQuery) {
  const rows = await latestMessagesOfWorkspace(db, principal.workspaceId, query, LATEST_WHATSAPP_MESSAGES);
  const simulated = await simulatedSenderIds(
    db,
    rows.map((row) => row.senderId),
  );
  return rows.map((row) => whatsAppMessageView(row, simulated.has(row.senderId)));
}

/** The conversation as the API answers it; the customer-service window as it stands at `now`. */
export function whatsAppConversationView(conversation: WhatsAppConversation, now: Date = new Date()) {
  const window = customerServiceWindow(conversation.lastInboundAt, now);
  return {
    id: conversation.id,
    senderId: conversation.senderId,
    contactE164: conversation.contactE164,
    contactName: conversation.contactName,
    lastInboundAt: conversation.lastInboundAt?.toISOString() ?? null,
    lastMessageAt: conversation.lastMessageAt.toISOString(),
    windowOpen: window.open,
    windowExpiresAt: window.expiresAt?.toISOString() ?? null,
    archived: conversation.archived,
    archivedAt: conversation.archivedAt?.toISOString() ?? null,
    createdAt: conversation.createdAt.toISOString(),
  };
}
