import { z } from 'zod';
import { cursorQuery, offsetQuery } from '../http/pagination';
import { defineRoute } from '../http/route';
import { LEAD_MESSAGE_FIELDS } from '../../lib/whatsapp/lead-message-result';
import { findLeadResult, listCalls, listLeadResults } from './results';
import { whatsAppMessageSchema } from '../whatsapp/whatsapp-message-view';
import { WAITING_FOR } from './lead-waiting';

const callView = z.object({
  attempt: z.number().int(),
  direction: z
    .enum(['outbound', 'inbound'])
    .describe(
      'outbound: the product dialed; inbound: the person called a number of the workspace, answered by its inbound agent (docs/features/carriers/inbound.md).',
    ),
  status: z.string(),
  outcome: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  provider: z.string().describe('simulated for the embedded telephony: no real call was placed.'),
  simulated: z
    .boolean()
    .describe(
      "true when the simulated carrier placed it (provider simulated, docs/configuration.md#simulators): nobody was called, its outcome and transcript were invented. false for every carrier connection, a twin's included.",
    ),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
});

/** A WHATSAPP campaign's lead's one template message, where a voice lead has calls. */
export const leadMessageSchema = whatsAppMessageSchema.pick({ ...LEAD_MESSAGE_FIELDS, simulated: true }).extend({
  status: z
    .enum(['accepted', 'sent', 'delivered', 'read', 'failed'])
    .describe(
      'accepted (recorded, not yet taken by the provider), sent, delivered, read, or failed; it only moves forward.',
    ),
});

/** What a dial-ladder lead between attempts waits for (docs/features/dial-ladder.md#what-a-lead-waits-for). */
export const leadWaitingSchema = z
  .object({
    for: z
      .enum(WAITING_FOR)
      .describe(
        "rung: its next rung's delay; calling_window: the calling window to open in the lead's time zone; line: a free line of its campaign (it is in the campaign's line queue); campaign: its campaign to run (it is a draft or paused).",
      ),
    nextAttemptAt: z
      .string()
      .nullable()
      .describe(
        'When its next attempt is due (ISO 8601, UTC), for rung and calling_window; null for line and campaign, which end at no known time.',
      ),
    linePosition: z
      .number()
      .int()
      .min(1)
      .nullable()
      .describe(
        "For line: its place in the campaign's line queue, 1 being next to get a line; null for the other waits, and for a lead just handed a line (it is about to dial).",
      ),
  })
  .describe('What the lead waits for before its next attempt.');

export const leadResultSchema = z.object({
  leadId: z.string(),
  campaignId: z.string(),
  idempotencyKey: z.string(),
  phone: z.string(),
  name: z.string().nullable(),
  status: z.enum(['queued', 'dialing', 'completed', 'failed', 'cancelled']),
  waiting: leadWaitingSchema
    .nullable()
    .describe(
      "What a lead of a CLASSIC voice campaign waits for between its attempts (status queued or dialing): its next rung, the calling window, a line or its campaign. null while it is on a call or being prepared for one, once it is finished, and always for a JOURNEY or WHATSAPP campaign's lead. A lead dialing with waiting null is on a call, or about to place one.",
    ),
  outcome: z
    .string()
    .nullable()
    .describe(
      "The last attempt's outcome (a call's); opted_out also for a lead its number's opt-out ended before its next attempt (the number was put on the Do-Not-Call list meanwhile: GET /do-not-call/{phone} says how). A WHATSAPP campaign's lead: its message's, as the message stands now: delivered, read, failed, or undelivered (its lead finished while it was still accepted or sent); null while the lead waits, or when no message was sent (the lead's lead.finished event names why).",
    ),
  attempts: z.number().int().describe('Calls made; a WHATSAPP lead: 1 once its message is recorded, else 0.'),
  calls: z.array(callView).describe('The calls, by attempt; always empty for a WHATSAPP lead.'),
  message: leadMessageSchema
    .nullable()
    .optional()
    .describe(
      "A WHATSAPP campaign's lead only (absent for others): its one template message, null until it is recorded or when none was sent (Do-Not-Call, stopped campaign, a refusal).",
    ),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const workspaceCallSchema = callView.extend({
  id: z.string(),
  kind: z
    .enum(['campaign', 'test', 'inbound'])
    .describe(
      "campaign: a lead's call on a campaign (an attempt, or the lead calling in); test: a test call (POST /calls/test), outside any campaign; inbound: a call in from a number no lead of the workspace has (docs/features/carriers/inbound.md).",
    ),
  campaignId: z
    .string()
    .nullable()
    .describe(
      "The campaign the call was placed for (an inbound call: its lead's); null for a test call and kind inbound.",
    ),
  leadId: z.string().nullable().describe('The lead called, or who called in; null for a test call and kind inbound.'),
  phone: z.string().describe("The person's number (E.164): the number called, or for an inbound call the caller's."),
  evaluationScore: z
    .number()
    .int()
    .nullable()
    .describe(
      "The call intelligence's evaluation score, 0 to 100 (docs/features/call-intelligence.md); null until computed.",
    ),
  extractedFields: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).nullable())
    .nullable()
    .describe(
      "The agent's extraction fields as filled from the transcript, by name (null: not found); null until computed.",
    ),
});

const campaignFilter = { campaignId: z.string().uuid().optional() };

export const resultRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/results/{leadId}',
    access: { permission: 'campaigns.view' },
    summary: "One lead's result (its resultUrl): current status, last outcome, and the calls it made.",
    tags: ['Results'],
    params: z.object({ leadId: z.string() }),
    responses: { 200: { description: 'The result.', schema: leadResultSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await findLeadResult(services, principal, params.leadId),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/results',
    access: { permission: 'campaigns.view' },
    summary:
      'Lead results, newest first. Cursor pagination: limit (default 50, max 100) and cursor; nextCursor null on the last page.',
    tags: ['Results'],
    query: z.object({ ...cursorQuery(50, 100), ...campaignFilter }),
    responses: {
      200: {
        description: 'A page.',
        schema: z.object({ items: z.array(leadResultSchema), nextCursor: z.string().nullable() }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listLeadResults(services, principal, query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/calls',
    access: { permission: 'calls.view' },
    summary:
      'Calls of the workspace, newest first. Offset pagination: limit (default 50, max 200) and offset; the total is returned.',
    tags: ['Calls'],
    query: z.object({ ...offsetQuery, ...campaignFilter }),
    responses: {
      200: {
        description: 'A page.',
        schema: z.object({ total: z.number().int(), items: z.array(workspaceCallSchema) }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listCalls(services, principal, query),
    }),
  }),
];
