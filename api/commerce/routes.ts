import { z } from 'zod';
import { defineRoute } from '../http/route';
import { pageQuery } from '../http/pagination';
import { listCommerceOrders } from './commerce-orders';

const commerceOrderSchema = z.object({
  id: z.string().uuid().describe('The order id in this service.'),
  externalOrderId: z.string().describe("The store's order id (Shopify's numeric id, as a string)."),
  orderNumber: z.string().describe('The number the store shows ("#1001").'),
  currency: z.string().describe('ISO 4217 code, as the store sends it.'),
  totalPrice: z.string().describe('As the store sends it ("49.90").'),
  financialStatus: z
    .string()
    .describe('As the store sends it (paid, pending, refunded, voided...); pending when it sends none.'),
  fulfillmentStatus: z
    .string()
    .describe('As the store sends it (fulfilled, partial...); unfulfilled when it sends none.'),
  customerName: z.string().describe("The customer's name, else the billing or shipping address's; empty when none."),
  placedAt: z.string().describe("ISO 8601 (UTC): the store's time of the order (its created_at)."),
  attributedToService: z
    .boolean()
    .describe(
      'The order is attributed to the service (docs/features/commerce.md#orders-from-the-stores-webhooks-to-get-commerceorders).',
    ),
  attributedCampaignId: z
    .string()
    .uuid()
    .nullable()
    .describe('The campaign it is attributed to; null when not attributed.'),
  utmSource: z
    .string()
    .nullable()
    .describe('utm_source as found (note attributes, else the landing site); null when none.'),
  utmCampaign: z
    .string()
    .nullable()
    .describe('utm_campaign as found (note attributes, else the landing site); null when none.'),
});

export const commerceOrderRoutes = [
  defineRoute({
    method: 'get',
    path: '/commerce/orders',
    access: { permission: 'sales.view', requires: { feature: 'd2c' } },
    summary:
      "The workspace's orders from its connected stores, newest placed first (placedAt, then id, descending): page pagination (page from 1, default 1; limit default 50, max 200) with total; attributed=true keeps the orders attributed to the service, attributed=false the others.",
    tags: ['Commerce'],
    query: z.object({
      ...pageQuery,
      attributed: z
        .enum(['true', 'false'])
        .optional()
        .transform((value) => (value === undefined ? undefined : value === 'true'))
        .describe('true: only orders attributed to the service; false: only the others; absent: all.'),
    }),
    responses: {
      200: {
        description: 'A page.',
        schema: z.object({ items: z.array(commerceOrderSchema), total: z.number().int() }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listCommerceOrders(services, principal, query),
    }),
  }),
];
