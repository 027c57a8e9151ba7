import { z } from 'zod';
import { campaignStatusReasonSchema } from '../../lib/dial-ladder/carrier-breaker';
import { ErrorCode } from '../../lib/error-codes';
import { cursorQuery, offsetQuery } from '../http/pagination';
import { defineRoute } from '../http/route';
import { listApiLogs } from './api-logs';
import { campaignKpis } from './campaign-kpis';
import { MAX_CONTACTS, addContacts, contactInputSchema, previewContacts } from './contacts';
import { campaignActivity, listCampaignLeads } from '../leads/results';
import { leadResultSchema, workspaceCallSchema } from '../leads/results-routes';

const campaignParams = z.object({ id: z.string() });

const contactsBody = z.object({
  contacts: z
    .array(contactInputSchema)
    .min(1)
    .max(MAX_CONTACTS)
    .describe(
      `1 to ${MAX_CONTACTS} contacts. One invalid phone refuses the whole request (400 invalid_body naming it) and nothing is stored.`,
    ),
});

const count = (description: string) => z.number().describe(description);
const kpiSchema = z.object({
  contacts: count(
    'Phones of the campaign: its leads (pushed, or enrolled from the calling list) plus calling-list entries not enrolled yet, each phone counted once.',
  ),
  dialedContacts: count(
    "Phones with at least one call placed. WHATSAPP: phones messaged, i.e. whose template message the provider took (it has the provider's id, or was reported sent, delivered or read; a message refused before or by the send is not counted).",
  ),
  reachedContacts: count(
    'Phones with at least one call answered or taken by voicemail. WHATSAPP: phones whose message was delivered (or read).',
  ),
  pickedUpContacts: count(
    'Phones with at least one call answered by a person. WHATSAPP: phones whose message was read.',
  ),
  placed: count(
    'Calls placed (every attempt, including those still dialing). WHATSAPP: messages the provider took (one per lead, so leads messaged).',
  ),
  connectRate: count(
    'reachedContacts / dialedContacts, a fraction from 0 to 1 (4 decimals); 0 when nothing was dialed. WHATSAPP: delivered / messaged.',
  ),
  pickupRate: count(
    'pickedUpContacts / dialedContacts, a fraction from 0 to 1 (4 decimals); 0 when nothing was dialed. WHATSAPP: read / messaged.',
  ),
  avgDurationMs: count(
    'Mean duration of answered calls, in milliseconds (rounded); 0 when none. WHATSAPP: always 0 (a message has no duration).',
  ),
  pending: count(
    "Leads not finished (queued or dialing) plus calling-list entries not enrolled yet. WHATSAPP: leads waiting for the campaign, the sending window, the sender's pace or their message's delivery.",
  ),
  completed: count('Leads finished completed (answered). WHATSAPP: their message was delivered or read.'),
  failed: count(
    'Leads finished without success: failed (ladder exhausted, invalid number) or cancelled (stopped campaign, Do-Not-Call). WHATSAPP: the message failed or was not delivered within 24 hours, a refusal before sending (credits, sender, template, variable, no sending window), or cancelled (stopped campaign, Do-Not-Call).',
  ),
  reengaging: count(
    'Leads not finished that were already called at least once: waiting for, or on, a later rung. WHATSAPP: always 0 (a lead gets one message, never a second).',
  ),
  triggered: count('Leads that entered through the API (lead push), as opposed to the calling list.'),
  simulatedPlaced: count(
    'Of placed, those a simulator carried (provider simulated: a caller number bound to no carrier connection, where the deployment enables simulators, docs/configuration.md#simulators): no real call was placed, their outcomes and transcripts are invented. WHATSAPP: messages of a sender bound to no Meta connection, carried by the simulated provider. 0 in production.',
  ),
  pausedReason: campaignStatusReasonSchema
    .nullable()
    .describe(
      'Why a PAUSED campaign was paused by the service itself (code carrier_failures: the carrier circuit breaker; docs/features/dial-ladder.md#carrier-circuit-breaker); null when it is not paused, or was paused by an operator or a key.',
    ),
});

/** How contacts added to a calling list are answered (POST /contacts, POST /import-from-crm), and the refusal of a started campaign. */
export const contactsAddedAnswer = {
  responses: {
    200: {
      description: 'What the list gained.',
      schema: z.object({ added: z.number().int(), total: z.number().int() }),
    },
  },
  errors: { 409: [ErrorCode.campaign_not_draft] },
};

export const campaignDataRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/contacts',
    access: { permission: 'campaigns.edit' },
    summary:
      "Add contacts to a DRAFT campaign's calling list (else 409 campaign_not_draft). Duplicates within the request and phones already on the list are skipped; a phone that is already a workspace contact keeps its name and metadata. added: contacts new to the list; total: valid unique phones in the request.",
    tags: ['Campaign data'],
    params: campaignParams,
    body: contactsBody,
    ...contactsAddedAnswer,
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await addContacts(services, principal, params.id, body.contacts),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/contacts',
    access: { permission: 'campaigns.view' },
    summary:
      'Preview the calling list: columns (phone, name, then every metadata key seen on the list), rowCount, and its first 5 rows in the order they were added. Scope decided here: campaigns.view.',
    tags: ['Campaign data'],
    params: campaignParams,
    responses: {
      200: {
        description: 'The preview.',
        schema: z.object({
          columns: z.array(z.string()),
          rowCount: z.number().int(),
          preview: z.array(z.record(z.string(), z.unknown())),
        }),
      },
    },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await previewContacts(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/kpis',
    access: { permission: 'campaigns.view' },
    summary:
      "The campaign's KPIs, computed now. Every counter is defined below; rates are fractions from 0 to 1. A WHATSAPP campaign (CLASSIC, channel WHATSAPP) answers the same fields from its leads' template messages: an attempt is a message the provider took, reached is delivered, picked up is read (each field says what it means for messages).",
    tags: ['Campaign data'],
    params: campaignParams,
    responses: { 200: { description: 'The KPIs.', schema: kpiSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await campaignKpis(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/activity',
    access: { permission: 'campaigns.view' },
    summary: "The campaign's latest 50 calls, newest first (a bare array).",
    tags: ['Campaign data'],
    params: campaignParams,
    responses: { 200: { description: 'Up to 50 calls.', schema: z.array(workspaceCallSchema) } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await campaignActivity(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/leads',
    access: { permission: 'campaigns.view' },
    summary: "The campaign's leads, newest first: offset pagination (limit default 50, max 200, offset) with total.",
    tags: ['Campaign data'],
    params: campaignParams,
    query: z.object(offsetQuery),
    responses: {
      200: { description: 'A page.', schema: z.object({ items: z.array(leadResultSchema), total: z.number().int() }) },
    },
    handler: async ({ services, principal, params, query }) => ({
      status: 200,
      body: await listCampaignLeads(services, principal, params.id, query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/api-logs',
    access: { permission: 'campaigns.view' },
    summary:
      'Requests made against the campaign through the API, newest first (method, path without query, status, key id, request id, time; never the key). Cursor pagination (default 50, max 100) plus total. Kept API_LOG_RETENTION_DAYS days (default 30).',
    tags: ['Campaign data'],
    params: campaignParams,
    query: z.object(cursorQuery(50, 100)),
    responses: {
      200: {
        description: 'A page.',
        schema: z.object({
          items: z.array(
            z.object({
              id: z.string(),
              method: z.string(),
              path: z.string(),
              status: z.number().int(),
              keyId: z.string().nullable(),
              requestId: z.string(),
              createdAt: z.string(),
            }),
          ),
          nextCursor: z.string().nullable(),
          total: z.number().int(),
        }),
      },
    },
    handler: async ({ services, principal, params, query }) => ({
      status: 200,
      body: await listApiLogs(services, principal, params.id, query),
    }),
  }),
];
