import { z } from 'zod';
import {
  MAX_ORDER_NOTIFICATION_DELAY_MINUTES,
  MAX_ORDER_NOTIFICATION_RULES,
  ORDER_NOTIFICATION_PRESET_IDS,
  RECENT_ORDER_VOLUME_DAYS,
} from '../../lib/commerce/order-notification-presets';
import { defineRoute } from '../http/route';
import { getOrderNotificationRules, replaceOrderNotificationRules } from './order-notifications';

const tags = ['CRM'];
const params = z.object({ id: z.string().describe('A CRM connection of the workspace.') });

const ruleInputSchema = z.strictObject({
  templateId: z.string().uuid().describe('A WhatsApp template of the workspace (GET /whatsapp/templates).'),
  presetId: z
    .enum(ORDER_NOTIFICATION_PRESET_IDS)
    .describe(
      "How the order fills the template's variables {{1}}..{{n}} (the preset's first n values; a template with more variables than the preset has values is refused): " +
        'order_basic: customer name, order number, total with currency ("49.90 EUR"); order_number: order number; customer_name: customer name; no_variables: none. ' +
        'A missing customer name reads "Customer".',
    ),
  enabled: z.boolean().describe('A disabled rule starts nothing, and a notification waiting for it sends nothing.'),
  delayMinutes: z
    .number()
    .int()
    .min(0)
    .max(MAX_ORDER_NOTIFICATION_DELAY_MINUTES)
    .describe(
      `Minutes from the order's arrival to the message, 0 to ${MAX_ORDER_NOTIFICATION_DELAY_MINUTES} (7 days); 0 sends at once.`,
    ),
});

const rulesAnswerSchema = z.object({
  rules: z.array(
    ruleInputSchema.extend({
      id: z.string().uuid().describe('New on every replace.'),
      trigger: z.string().describe('ORDER_PLACED: a new order of the connection.'),
      presetId: z.string(),
      templateStatus: z
        .string()
        .describe(
          "The template's review status now (PENDING, APPROVED, REJECTED, PAUSED, DISABLED; DELETED when it is gone).",
        ),
      templatePurpose: z
        .string()
        .describe(
          "From the template's category: transactional (utility), marketing, authentication; unknown when the template is gone.",
        ),
    }),
  ),
  recentOrderVolume: z
    .number()
    .int()
    .describe(`The connection's orders placed in the last ${RECENT_ORDER_VOLUME_DAYS} days (by the store's time).`),
});

export const orderNotificationRoutes = [
  defineRoute({
    method: 'put',
    path: '/crm/connections/{id}/order-notifications',
    access: { permission: 'crm.edit' },
    summary:
      `Replace the connection's order-notification rules (at most ${MAX_ORDER_NOTIFICATION_RULES}; an empty list removes them). Each new order of the connection starts, per enabled rule, a durable notification that waits delayMinutes, then sends the template to the customer's phone on the WhatsApp channel (the workspace's first connected sender; billed per message; once per rule and order) unless the order was cancelled, the rule is gone or disabled, the template is no longer APPROVED or the order has no phone. ` +
      'Every rule gets a new id: notifications already waiting under the old rules find their rule gone and send nothing (docs/features/commerce.md#order-notifications). A template not of the workspace, or with more variables than the preset fills: 400 invalid_body naming the rule.',
    tags,
    params,
    body: z.strictObject({
      rules: z
        .array(ruleInputSchema)
        .max(MAX_ORDER_NOTIFICATION_RULES)
        .describe(`0 to ${MAX_ORDER_NOTIFICATION_RULES} rules, in the order they are answered.`),
    }),
    responses: { 200: { description: 'The rules as stored, and the recent order volume.', schema: rulesAnswerSchema } },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await replaceOrderNotificationRules(services, principal, params.id, body.rules),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/crm/connections/{id}/order-notifications',
    access: { permission: 'crm.view' },
    summary: "The connection's order-notification rules as PUT stored them, and its recent order volume.",
    tags,
    params,
    responses: { 200: { description: 'The rules and the recent order volume.', schema: rulesAnswerSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getOrderNotificationRules(services, principal, params.id),
    }),
  }),
];
