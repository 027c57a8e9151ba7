import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { whatsAppCampaignSettingsSchema } from '../../lib/whatsapp/campaign-settings';
import { defineRoute } from '../http/route';
import { getWhatsAppCampaign, putWhatsAppCampaign } from './whatsapp-campaigns';

const tags = ['WhatsApp'];
const params = z.object({ id: z.string().describe('A WHATSAPP-channel campaign of GET /campaigns.') });

const bodySchema = whatsAppCampaignSettingsSchema.extend({
  senderId: whatsAppCampaignSettingsSchema.shape.senderId.describe('A connected sender of the workspace.'),
  templateId: whatsAppCampaignSettingsSchema.shape.templateId.describe('An APPROVED template of the workspace.'),
  variables: whatsAppCampaignSettingsSchema.shape.variables.describe(
    'Each template variable by its number ("1", "2", ...: exactly {{1}}..{{n}} of the template) to its source: {"field": "name"} (the lead\'s name, phone, or one of its fields, with an optional fallback) or {"value": "fixed text"}. A lead lacking a field without fallback is not messaged (its outcome: variable_missing).',
  ),
  sendingWindow: whatsAppCampaignSettingsSchema.shape.sendingWindow.describe(
    "When messages may go, in the lead's local time, as a campaign's callingWindow: start, end (HH:MM, end exclusive, 24:00 the day's end), days (1 = Monday ... 7).",
  ),
});

const settingsSchema = bodySchema.extend({
  campaignId: z.string().uuid(),
  updatedAt: z.string().describe('When it was last set (ISO 8601).'),
});

export const whatsAppCampaignRoutes = [
  defineRoute({
    method: 'put',
    path: '/whatsapp/campaigns/{id}',
    // Spec section 5, stricter scopes: the dashboard needs whatsapp.edit, a key campaigns.edit.
    access: { permission: 'campaigns.edit' },
    summary:
      "Set a WHATSAPP-channel campaign's messaging: the sender, the APPROVED template, where each template variable comes from, and the sending window. Starting the campaign then sends one template message per lead (pushed leads and the calling list alike), paced per sender and billed per message (docs/features/whatsapp.md). " +
      'Leads already messaged keep their message. Another channel: 409 campaign_not_whatsapp; a disconnected sender or a template not APPROVED: 409; a sender bound to no Meta connection while simulators are disabled (SIMULATORS): 409 no_whatsapp_connection.',
    tags,
    params,
    body: bodySchema,
    responses: { 200: { description: 'The messaging as stored.', schema: settingsSchema } },
    errors: {
      409: [
        ErrorCode.campaign_not_whatsapp,
        ErrorCode.whatsapp_sender_disconnected,
        ErrorCode.whatsapp_template_not_approved,
        ErrorCode.no_whatsapp_connection,
      ],
    },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await putWhatsAppCampaign(services, principal, params.id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/whatsapp/campaigns/{id}',
    access: { permission: 'whatsapp.view' },
    summary: "A WHATSAPP campaign's messaging as PUT set it; never set: 404 not_found.",
    tags,
    params,
    responses: { 200: { description: 'The messaging.', schema: settingsSchema } },
    errors: { 404: [ErrorCode.not_found], 409: [ErrorCode.campaign_not_whatsapp] },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getWhatsAppCampaign(services, principal, params.id),
    }),
  }),
];
