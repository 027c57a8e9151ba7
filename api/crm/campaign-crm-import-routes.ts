import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { defineRoute } from '../http/route';
import { storableInstantSchema } from '../http/storable-input';
import { findCrmImport, importContactsFromCrm, listCrmImports } from './campaign-crm-import';
import { ErrorCode } from '../../lib/error-codes';
import { MAX_CONTACTS } from '../campaign-data/contacts';
import { contactsAddedAnswer } from '../campaign-data/routes';

const crmImportSchema = z.object({
  id: z.string().uuid(),
  campaignId: z.string().uuid(),
  connectionId: z.string().uuid(),
  provider: z.string().describe('shopify, or shopify-twin (the store twin answered the pages).'),
  status: z
    .enum(['running', 'completed', 'failed'])
    .describe('running: pages still to read; completed: every page read; failed: stopped, see error.'),
  pages: z.number().int().describe('Pages of customers read and applied.'),
  customersRead: z.number().int(),
  imported: z.number().int().describe('Customers added to the calling list.'),
  skippedTotal: z.number().int(),
  skipped: z
    .record(z.string(), z.number().int())
    .describe(
      'Customers not imported, by reason: no_phone, invalid_phone (not a valid E.164 number), limit_reached (the import listed 10,000 already), duplicate (already imported ' +
        'into this campaign, or a phone the list holds already), or the SMS marketing state when it is not SUBSCRIBED (NOT_SUBSCRIBED, PENDING, UNSUBSCRIBED, REDACTED, ...).',
    ),
  throttledWaits: z
    .number()
    .int()
    .describe("Waits for the store's cost bucket (a THROTTLED answer, or too few points left)."),
  error: z.string().nullable().describe('failed: why; else null.'),
  createdAt: z.string().describe('ISO 8601 date-time.'),
  updatedAt: z.string().describe('ISO 8601 date-time.'),
  finishedAt: z.string().nullable().describe('ISO 8601 date-time; null while running.'),
});

export const campaignCrmImportRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/import-from-crm',
    // Spec section 5, stricter scopes: the dashboard needs crm.edit, a key campaigns.edit.
    access: { permission: 'campaigns.edit' },
    summary:
      "Add a CRM connection's customers to a DRAFT campaign's calling list, exactly as POST /campaigns/{id}/contacts adds contacts (else 409 campaign_not_draft): one contact per distinct customer phone of the connection's orders matching the filters (orders without a phone and cancelled orders are left out), named as on the customer's latest order, metadata { source: \"crm\", connectionId, orders, lastOrderAt }. " +
      `Phones already on the list are skipped; a phone that is already a workspace contact keeps its name and metadata. added: contacts new to the list; total: customers matched. A connection not of the workspace: 400 invalid_body at connectionId; more than ${MAX_CONTACTS} customers: 400 invalid_body (narrow the filters). ` +
      "A connection holding an Admin API token (the operator's `crm admin-token`) reads the store's customers instead, through Shopify's Admin GraphQL API: 202 { import }, a durable job that lists every customer whose default phone is a valid E.164 number with SMS marketing state SUBSCRIBED (the order filters are refused there with 400 invalid_body).",
    tags: ['Campaign data'],
    params: z.object({ id: z.string() }),
    body: z.strictObject({
      connectionId: z.string().describe('A CRM connection of the workspace (GET /crm/connections).'),
      since: storableInstantSchema
        .optional()
        .describe(
          'Only orders placed at or after this instant (RFC 3339, with seconds and offset: 2026-11-01T00:00:00Z).',
        ),
      financialStatus: z
        .string()
        .min(1)
        .check(atMostCodePoints(100))
        .optional()
        .describe('Only orders of this financial status, as the store writes it (paid, pending, refunded, ...).'),
      attributed: z
        .boolean()
        .optional()
        .describe('true: only orders attributed to the service; false: only orders not attributed; absent: both.'),
    }),
    responses: {
      ...contactsAddedAnswer.responses,
      202: {
        description:
          "The connection holds an Admin API token: the import, started (a durable job reading the store's customers page by page); " +
          'follow it at GET /campaigns/{id}/crm-imports/{importId} (the Location header).',
        schema: z.object({ import: crmImportSchema }),
        headers: ['Location'],
      },
    },
    errors: { ...contactsAddedAnswer.errors, 503: [ErrorCode.temporal_unavailable] },
    handler: async ({ services, principal, params, body }) => {
      const answer = await importContactsFromCrm(services, principal, params.id, body);
      if ('import' in answer)
        return {
          status: 202,
          body: answer,
          headers: { Location: `/campaigns/${params.id}/crm-imports/${answer.import.id}` },
        };
      return { status: 200, body: answer };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/crm-imports',
    access: { permission: 'campaigns.view' },
    summary: "The campaign's Admin API imports (a connection with an Admin API token), newest first (at most 100).",
    tags: ['Campaign data'],
    params: z.object({ id: z.string() }),
    responses: { 200: { description: 'The imports.', schema: z.object({ imports: z.array(crmImportSchema) }) } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await listCrmImports(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/crm-imports/{importId}',
    access: { permission: 'campaigns.view' },
    summary:
      "An Admin API import's progress: customers read, imported, skipped by reason, its status. An unknown id, or one of another campaign, is 403 forbidden.",
    tags: ['Campaign data'],
    params: z.object({ id: z.string(), importId: z.string() }),
    responses: { 200: { description: 'The import.', schema: crmImportSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await findCrmImport(services, principal, params.id, params.importId),
    }),
  }),
];
