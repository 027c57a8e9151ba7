import { z } from 'zod';
import { offsetQuery } from '../http/pagination';
import { defineRoute } from '../http/route';
import {
  LATEST_WHATSAPP_MESSAGES,
  latestWhatsAppMessages,
  listWhatsAppConversations,
  setWhatsAppConversationArchived,
  whatsAppConversationView,
} from './whatsapp-inbox';
import { whatsAppMessageSchema } from './whatsapp-message-view';

const conversationSchema = z.object({
  id: z.string().uuid(),
  senderId: z.string().uuid().describe('The sender (GET /whatsapp/senders) the contact writes with.'),
  contactE164: z.string().describe("The contact's number, E.164."),
  contactName: z.string().nullable().describe("The name the contact's WhatsApp profile gave; null: none."),
  lastInboundAt: z.iso.datetime().nullable().describe("The contact's last message; null: the contact never wrote."),
  lastMessageAt: z.iso.datetime().describe('The last message either way: the order of the list.'),
  windowOpen: z
    .boolean()
    .describe(
      'Whether the 24-hour customer-service window is open now (lastInboundAt less than 24 hours ago): free-form text may be sent only then; a template at any time.',
    ),
  windowExpiresAt: z.iso
    .datetime()
    .nullable()
    .describe(
      'When the window the last inbound message opened closes (lastInboundAt + 24 h, past or future); null: never opened.',
    ),
  archived: z.boolean().describe('Local inbox state (archive/unarchive); nothing reaches the contact.'),
  archivedAt: z.iso.datetime().nullable().describe('When it was archived; null when not archived.'),
  createdAt: z.iso.datetime(),
});

const conversationParams = z.object({ id: z.string().describe('A conversation id of GET /whatsapp/conversations.') });
const senderFilter = z.string().uuid().optional().describe("Keep one sender's (a sender id of this workspace).");
const tags = ['WhatsApp'];

/** POST /whatsapp/conversations/{id}/archive and /unarchive: spec 5, the dashboard needs whatsapp.view, a key whatsapp.edit. */
const archiveRoute = (action: 'archive' | 'unarchive') =>
  defineRoute({
    method: 'post',
    path: `/whatsapp/conversations/{id}/${action}`,
    access: { permission: 'whatsapp.edit' },
    summary:
      action === 'archive'
        ? 'Archive a conversation: it leaves the inbox (GET /whatsapp/conversations) for the archive (?archived=true). Local state only; idempotent (the first archivedAt kept). A key needs whatsapp.edit.'
        : 'Unarchive a conversation: back in the inbox, archivedAt cleared. Local state only; idempotent. A key needs whatsapp.edit.',
    tags,
    params: conversationParams,
    responses: { 200: { description: 'The conversation.', schema: conversationSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: whatsAppConversationView(
        await setWhatsAppConversationArchived(services, principal, params.id, action === 'archive'),
      ),
    }),
  });

export const whatsAppInboxRoutes = [
  defineRoute({
    method: 'get',
    path: '/whatsapp/conversations',
    access: { permission: 'whatsapp.view' },
    summary:
      "The workspace's WhatsApp conversations, latest activity (lastMessageAt) first: offset pagination (limit default 50, max 200, offset) with total. The inbox by default (archived=false); archived=true lists the archive.",
    tags,
    query: z.object({
      ...offsetQuery,
      archived: z
        .enum(['true', 'false'])
        .default('false')
        .transform((value) => value === 'true')
        .describe('false (the default): the inbox; true: the archived conversations.'),
      senderId: senderFilter,
    }),
    responses: {
      200: {
        description: 'A page.',
        schema: z.object({ items: z.array(conversationSchema), total: z.number().int() }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listWhatsAppConversations(services, principal, query),
    }),
  }),
  archiveRoute('archive'),
  archiveRoute('unarchive'),
  defineRoute({
    method: 'get',
    path: '/whatsapp/messages',
    access: { permission: 'whatsapp.view' },
    summary: `The latest ${LATEST_WHATSAPP_MESSAGES} messages of the workspace (spec 4.1: a fixed-size recent list, no pages), both ways, newest first (createdAt, then id, descending). Filters narrow before the cut: the latest ${LATEST_WHATSAPP_MESSAGES} of those matching every filter given.`,
    tags,
    query: z.object({
      senderId: senderFilter,
      conversationId: z.string().uuid().optional().describe("Keep one conversation's."),
      direction: z.enum(['inbound', 'outbound']).optional(),
      status: z.enum(['accepted', 'sent', 'delivered', 'read', 'failed', 'received']).optional(),
    }),
    responses: {
      200: {
        description: `At most ${LATEST_WHATSAPP_MESSAGES} messages in items, newest first.`,
        schema: z.object({ items: z.array(whatsAppMessageSchema).max(LATEST_WHATSAPP_MESSAGES) }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: { items: await latestWhatsAppMessages(services, principal, query) },
    }),
  }),
];
