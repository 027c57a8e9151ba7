import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { defineRoute } from '../http/route';
import { listPhoneNumbers, routeInboundCalls } from './phone-numbers';

const READINESS =
  'true when the number has voice capability and routes to an agent that is not deleted, whose voice is in GET /voices and whose script has a non-empty openingLine (lib/agents/inbound-readiness.ts); false otherwise.';

const phoneNumberSchema = z.object({
  id: z.string().uuid(),
  e164: z.string().describe('The number in E.164 form, e.g. +14155550100.'),
  country: z.string().describe('ISO 3166-1 alpha-2 country of the number (libphonenumber), e.g. US.'),
  region: z
    .string()
    .describe(
      'Where in the country the number is from, by libphonenumber\'s geocoder in English, e.g. "San Francisco, CA"; "" when the geocoder has none (toll-free and most mobile numbers).',
    ),
  capabilities: z
    .object({
      voice: z.boolean().describe('Calls can be placed from it (campaign callerNumbers) and taken on it.'),
      whatsapp: z.boolean().describe('It can be used as a WhatsApp sender.'),
    })
    .describe('Set by the operator when the number is assigned (default: voice only).'),
  assignedAt: z.iso.datetime().describe('When the number was assigned to the workspace.'),
  inboundAgentId: z
    .string()
    .nullable()
    .describe(
      'The agent inbound calls are answered by; null: none. A deleted agent stays named here (with inboundReady false) until the routing is changed.',
    ),
  inboundAgentName: z.string().nullable().describe("That agent's current name; null when no agent is set."),
  inboundReady: z.boolean().describe(READINESS),
});

export const phoneNumberRoutes = [
  defineRoute({
    method: 'get',
    path: '/phone-numbers',
    access: { permission: 'phone_numbers.view' },
    summary:
      "The numbers assigned to the caller's workspace, all at once (unpaginated, by e164). Numbers are assigned by the operator (npm run admin -- number assign); buying them is refused to keys.",
    tags: ['Phone numbers'],
    responses: {
      200: { description: 'Every number of the workspace.', schema: z.object({ items: z.array(phoneNumberSchema) }) },
    },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: { items: await listPhoneNumbers(services, principal) },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/phone-numbers/{id}',
    access: { permission: 'phone_numbers.edit' },
    summary:
      "Route the number's inbound calls to an agent of the workspace, or to none (null). An unknown, deleted or other workspace's agent is refused with 400 invalid_body and nothing changes.",
    tags: ['Phone numbers'],
    params: z.object({ id: z.string().describe('A phone number id of GET /phone-numbers.') }),
    body: z.strictObject({
      inboundAgentId: z
        .string()
        .check(atMostCodePoints(200))
        .nullable()
        .describe('An agent id of GET /agents (not deleted) to answer inbound calls; null: no agent.'),
    }),
    responses: { 200: { description: 'The phone number.', schema: phoneNumberSchema } },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await routeInboundCalls(services, principal, params.id, body.inboundAgentId),
    }),
  }),
];
