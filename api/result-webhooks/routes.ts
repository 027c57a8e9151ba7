import { z } from 'zod';
import { defineRoute } from '../http/route';
import {
  deleteResultWebhookEndpoint,
  endpointView,
  listResultWebhookDeliveries,
  listResultWebhookEndpoints,
} from './result-webhooks';
import { cursorQuery } from '../http/pagination';

const endpointSchema = z.object({
  id: z.string().uuid(),
  url: z.string(),
  description: z.string().nullable(),
  createdAt: z.string(),
});

const deliverySchema = z.object({
  id: z.string().describe('msg_…: the webhook-id header of every attempt of this delivery.'),
  endpointId: z.string().uuid(),
  eventType: z.string().describe('lead.finished'),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
});

/** Delivery ids are msg_<base64url> (lib/result-webhooks/result-webhooks.ts), the webhook-id header receivers see. */
const deliveriesQuery = z.object(cursorQuery(30, 100, /^msg_[A-Za-z0-9_-]{1,64}$/));

export const resultWebhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/result-webhooks',
    access: { permission: 'result_webhooks.view' },
    summary:
      "List the workspace's result webhook endpoints (unpaginated, newest first; never the secret). " +
      'Endpoints are created by the operator CLI (`webhook create`): result_webhooks.edit is a scope a key can never hold.',
    tags: ['Result webhooks'],
    responses: { 200: { description: 'Every live endpoint of the workspace.', schema: z.array(endpointSchema) } },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: (await listResultWebhookEndpoints(services, principal)).map(endpointView),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/result-webhooks/{id}',
    access: { permission: 'result_webhooks.delete' },
    summary:
      'Delete an endpoint: no further event is sent to it, and its pending deliveries give up. ' +
      "An unknown id and another workspace's endpoint both answer 403 forbidden.",
    tags: ['Result webhooks'],
    params: z.object({ id: z.string() }),
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteResultWebhookEndpoint(services, principal, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/result-webhooks/deliveries',
    access: { permission: 'result_webhooks.view' },
    summary:
      "The workspace's result webhook deliveries, newest first, by cursor (limit default 30, max 100). " +
      'Event lead.finished, signed as Standard Webhooks; retried with growing delays for more than a day.',
    tags: ['Result webhooks'],
    query: deliveriesQuery,
    responses: {
      200: {
        description: 'One page; nextCursor is null on the last page.',
        schema: z.object({ items: z.array(deliverySchema), nextCursor: z.string().nullable() }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listResultWebhookDeliveries(services, principal, query),
    }),
  }),
];
