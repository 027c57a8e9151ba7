import { z } from 'zod';
import { CRM_ADMIN_PROVIDERS } from '../../lib/crm/admin-token';
import { CRM_DELIVERIES_KEPT } from '../../lib/crm/deliveries';
import { SHAPE_MAX_DEPTH, SHAPE_MAX_KEYS } from '../../lib/crm/payload-shape';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { deleteCrmConnection, getCrmConnection, listCrmConnections, listCrmDeliveries } from './crm-connections';
import { assertSignedByShop, receiveCrmWebhook } from './crm-webhooks';

const connectionSchema = z.object({
  id: z.string().uuid().describe('The connection id.'),
  kind: z.string().describe('shopify.'),
  shopDomain: z.string().describe("The shop's permanent domain (example.myshopify.com)."),
  webhookPath: z
    .string()
    .describe("The connection's public receiver, under the API's public address: /crm/connections/{id}/webhooks."),
  createdAt: z.string().describe('ISO 8601 date-time.'),
  adminApi: z
    .object({
      provider: z
        .enum(CRM_ADMIN_PROVIDERS)
        .describe("shopify: the store's own Admin API; shopify-twin: the store twin (tests, development)."),
      tokenSetAt: z.string().describe('ISO 8601 date-time: when the operator last set or rotated the token.'),
    })
    .nullable()
    .describe(
      'Whether the connection holds an Admin API access token (set by the operator, `crm admin-token`; never shown): ' +
        "then import-from-crm reads the store's customers through it. null: imports read the orders that arrived by webhook.",
    ),
});

const shapeSchema = z
  .looseObject({ type: z.string() })
  .describe(
    'The field shapes of the payload, never a value: { type } with type string, number, boolean or null; ' +
      '{ type: object, keys: { <key>: <shape> }, omittedKeys? } (the first ' +
      `${SHAPE_MAX_KEYS} keys, omittedKeys counting the others); { type: array, count, items? } (items: the shape of the ` +
      `first item); an object or array ${SHAPE_MAX_DEPTH} levels down is { type, truncated: true } (an array keeps count); ` +
      '{ type: none }: a rejected delivery, whose payload was not read.',
  );

const deliverySchema = z.object({
  id: z.string().uuid(),
  receivedAt: z.string().describe('ISO 8601 date-time.'),
  status: z
    .enum(['received', 'processed', 'ignored', 'failed', 'rejected'])
    .describe(
      'received: stored, being processed; processed: its order applied; ignored: a topic that is not an order; ' +
        'failed: could not be applied (processingError); rejected: an unsigned delivery an earlier version recorded (none is recorded now).',
    ),
  topic: z.string().describe('X-Shopify-Topic as given (empty when absent).'),
  processingError: z.string().nullable().describe('failed: why; else null.'),
  shape: shapeSchema,
});

const connectionParams = z.object({ id: z.string() });

export const crmRoutes = [
  defineRoute({
    method: 'get',
    path: '/crm/connections',
    access: { permission: 'crm.view' },
    summary:
      "The workspace's CRM connections (stores), all at once (unpaginated, newest first); never their secret. " +
      'Operators connect stores with the admin CLI (`crm connect`); POST /crm/connections is refused to keys.',
    tags: ['CRM'],
    responses: { 200: { description: 'Every live connection.', schema: z.array(connectionSchema) } },
    handler: async ({ services, principal }) => ({ status: 200, body: await listCrmConnections(services, principal) }),
  }),
  defineRoute({
    method: 'get',
    path: '/crm/connections/{id}',
    access: { permission: 'crm.view' },
    summary: 'One CRM connection, never its secret. A deleted one is 403 forbidden, like an unknown one.',
    tags: ['CRM'],
    params: connectionParams,
    responses: { 200: { description: 'The connection.', schema: connectionSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getCrmConnection(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/crm/connections/{id}',
    access: { permission: 'crm.delete' },
    summary:
      'Delete a CRM connection: gone from the API, its receiver answers 404 from then on; its orders and deliveries are kept. ' +
      'The shop can then be connected again.',
    tags: ['CRM'],
    params: connectionParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteCrmConnection(services, principal, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/crm/connections/{id}/deliveries',
    access: { permission: 'crm.view' },
    summary:
      `The connection's latest webhooks (at most ${CRM_DELIVERIES_KEPT}, newest first; older ones are deleted as new ones ` +
      'arrive, never one still being processed), as field shapes rather than payloads.',
    tags: ['CRM'],
    params: connectionParams,
    responses: {
      200: { description: 'The latest deliveries.', schema: z.object({ deliveries: z.array(deliverySchema) }) },
    },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await listCrmDeliveries(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/crm/connections/{id}/webhooks',
    access: { public: true },
    summary:
      "A connected store's webhook, as Shopify sends it. Public: authenticated by X-Shopify-Hmac-Sha256 (the connection's " +
      'secret), not by a key. Stored and answered at once; applied after the answer, durably (orders/create, ' +
      'orders/updated and orders/cancelled update the commerce orders; any other topic is recorded and ignored). ' +
      'Idempotent by X-Shopify-Event-Id. 404 not_found: no live connection has this id.',
    tags: ['CRM'],
    params: connectionParams,
    headerParameters: [
      {
        name: 'X-Shopify-Hmac-Sha256',
        description:
          "base64 HMAC-SHA256 of the raw body with the connection's secret, checked (timing-safely) before the body is parsed. " +
          'Wrong or missing: 401 invalid_signature, and nothing is kept.',
      },
      { name: 'X-Shopify-Shop-Domain', description: "Must be the connection's shop, else 401 invalid_signature." },
      { name: 'X-Shopify-Topic', description: 'orders/create, orders/updated, orders/cancelled; others are ignored.' },
      {
        name: 'X-Shopify-Event-Id',
        description:
          'The event id (X-Shopify-Webhook-Id when absent): a redelivery of the same id is answered 200 and changes nothing.',
      },
    ],
    body: z.record(z.string(), z.unknown()).describe("The store's payload (a Shopify order for the order topics)."),
    beforeValidation: assertSignedByShop,
    // A store's order (its line items, addresses, notes) is the size its customer made it: held to the API's 1 MB,
    // like any body, but read as bytes and verified before anything parses it.
    webhookBodyLimitBytes: 1024 * 1024,
    responses: {
      200: {
        description: 'Stored (or already stored): its processing follows.',
        schema: z.object({
          received: z.literal(true),
          deliveryId: z.string().uuid(),
          duplicate: z.boolean().describe('true: a redelivery of an event already received; nothing changed.'),
        }),
      },
    },
    errors: { 401: [ErrorCode.invalid_signature], 404: [ErrorCode.not_found] },
    handler: async ({ services, req, body }) => ({ status: 200, body: await receiveCrmWebhook(services, req, body) }),
  }),
];
