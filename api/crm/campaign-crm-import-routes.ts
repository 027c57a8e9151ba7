import { z } from 'zod';
import { defineRoute } from '../http/route';
import { storableInstantSchema } from '../http/storable-input';
import { importContactsFromCrm } from './campaign-crm-import';
import { MAX_CONTACTS } from '../campaign-data/contacts';
import { contactsAddedAnswer } from '../campaign-data/routes';

export const campaignCrmImportRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/import-from-crm',
    // Spec section 5, stricter scopes: the dashboard needs crm.edit, a key campaigns.edit.
    access: { permission: 'campaigns.edit' },
    summary:
      "Add a CRM connection's customers to a DRAFT campaign's calling list, exactly as POST /campaigns/{id}/contacts adds contacts (else 409 campaign_not_draft): one contact per distinct customer phone of the connection's orders matching the filters (orders without a phone and cancelled orders are left out), named as on the customer's latest order, metadata { source: \"crm\", connectionId, orders, lastOrderAt }. " +
      `Phones already on the list are skipped; a phone that is already a workspace contact keeps its name and metadata. added: contacts new to the list; total: customers matched. A connection not of the workspace: 400 invalid_body at connectionId; more than ${MAX_CONTACTS} customers: 400 invalid_body (narrow the filters).`,
    tags: ['Campaign data'],
    params: z.object({ id: z.string() }),
    body: z.strictObject({
      connectionId: z.string().describe('A CRM connection of the workspace (GET /crm/connections).'),
      since: storableInstantSchema
        .optional()
        .describe('Only orders placed at or after this instant (ISO 8601 with offset, e.g. 2026-11-01T00:00:00Z).'),
      financialStatus: z
        .string()
        .min(1)
        .max(100)
        .optional()
        .describe('Only orders of this financial status, as the store writes it (paid, pending, refunded, ...).'),
      attributed: z
        .boolean()
        .optional()
        .describe('true: only orders attributed to the service; false: only orders not attributed; absent: both.'),
    }),
    ...contactsAddedAnswer,
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await importContactsFromCrm(services, principal, params.id, body),
    }),
  }),
];
