import { z } from 'zod';
import { defineRoute } from '../http/route';
import {
  disconnectWhatsAppSender,
  findOwnedWhatsAppSender,
  listWhatsAppSenders,
  whatsAppSenderView,
} from './whatsapp-senders';

const senderSchema = z.object({
  id: z.string().uuid(),
  e164: z.string().describe('The WhatsApp number in E.164 form, unique in the workspace.'),
  displayName: z.string().nullable().describe('The display name set when it was connected; null: none.'),
  provider: z
    .string()
    .describe(
      'The WhatsApp provider it is connected through (FALLBACK_WHATSAPP_PROVIDER, e.g. simulated, or that of its Meta connection).',
    ),
  phoneNumberId: z.string().describe("The provider's id of the number (Cloud API phone_number_id)."),
  businessAccountId: z
    .string()
    .describe("The provider's WhatsApp Business Account the number belongs to (it owns the workspace's templates)."),
  status: z
    .enum(['CONNECTED', 'DISCONNECTED'])
    .describe('CONNECTED: it sends and receives. DISCONNECTED: kept for its history; nothing is sent from it.'),
  dailyRecipientLimit: z
    .number()
    .int()
    .describe("Business-initiated messages to distinct recipients per rolling 24 hours (the platform's limit tier)."),
  messagesPerSecond: z.number().int().describe('Messages per second the platform takes from this number.'),
  connectedAt: z.iso.datetime().describe('When it was (last) connected.'),
  disconnectedAt: z.iso.datetime().nullable().describe('When it was disconnected; null while CONNECTED.'),
});

const senderParams = z.object({ id: z.string().describe('A sender id of GET /whatsapp/senders.') });
const tags = ['WhatsApp'];

export const whatsAppSenderRoutes = [
  defineRoute({
    method: 'get',
    path: '/whatsapp/senders',
    access: { permission: 'whatsapp.view' },
    summary:
      "The workspace's WhatsApp senders, connected and disconnected, all at once (unpaginated, by e164). Operators connect them (npm run admin -- whatsapp sender connect); signup, QR connection and number reservation are refused to keys.",
    tags,
    responses: { 200: { description: 'Every sender of the workspace.', schema: z.array(senderSchema) } },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: (await listWhatsAppSenders(services, principal)).map(whatsAppSenderView),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/whatsapp/senders/{id}',
    access: { permission: 'whatsapp.view' },
    summary: 'Read one WhatsApp sender.',
    tags,
    params: senderParams,
    responses: { 200: { description: 'The sender.', schema: senderSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: whatsAppSenderView(await findOwnedWhatsAppSender(services, principal, params.id)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/whatsapp/senders/{id}',
    access: { permission: 'whatsapp.delete' },
    summary:
      'Disconnect a sender: DISCONNECTED with disconnectedAt, nothing is sent from it any more; it stays listed with its conversations and messages. Idempotent (204 again, the first disconnectedAt kept).',
    tags,
    params: senderParams,
    responses: { 204: { description: 'Disconnected.' } },
    handler: async ({ services, principal, params }) => {
      await disconnectWhatsAppSender(services, principal, params.id);
      return { status: 204 };
    },
  }),
];
