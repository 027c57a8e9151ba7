import { randomUUID } from 'node:crypto';
import { ZodError, z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import { isUuid } from '../../lib/uuid';
import { MAX_CONTACTS, addContacts, contactInputSchema } from '../campaign-data/contacts';
import type { AppServices } from '../app-services';
import { forbidden } from '../../lib/refusal';
import { startCrmImportWorkflow } from '../../lib/temporal/crm';
import {
  customersOfOrders,
  deleteUnstartedCrmImport,
  importingConnection,
  importOfCampaign,
  insertCrmImport,
  latestImportsOfCampaign,
} from './crm-store';

export interface CrmImportInput {
  connectionId: string;
  /** Only customers with an order placed at or after this instant. */
  since?: string;
  /** Only orders of this financial status, as the store writes it (paid, pending, refunded, ...). */
  financialStatus?: string;
  /** true: only orders attributed to the service; false: only orders not attributed. */
  attributed?: boolean;
}

const invalid = (path: string[], message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path, message, input }]);

/** The customers of the connection's orders matching the filters, at most one more than MAX_CONTACTS. */
const customersOf = ({ sql }: AppServices, input: CrmImportInput) => customersOfOrders(sql, input, MAX_CONTACTS + 1);

/**
 * POST /campaigns/{id}/import-from-crm (docs/features/crm.md): the connection's
 * customers become the campaign's contacts exactly as POST /campaigns/{id}/contacts adds them (the same
 * contact schema, the same service: a DRAFT campaign only, duplicates and phones already listed skipped,
 * existing workspace contacts keep their name and metadata), answered the same way. Each contact's name is
 * the customer's (up to 200 characters), its metadata `{ source: "crm", connectionId, orders, lastOrderAt }`.
 * A connection that is not the workspace's: 400 invalid_body at connectionId; more than MAX_CONTACTS
 * customers: 400 invalid_body (narrow the filters); none: { added: 0, total: 0 }.
 */
export async function importContactsFromCrm(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  input: CrmImportInput,
) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  // addContacts decides under the campaign's lock; this only spares reading the orders of a campaign already started.
  if (campaign.status !== 'DRAFT') throw new Refusal(ErrorCode.campaign_not_draft, { status: campaign.status });
  const connection =
    isUuid(input.connectionId) && (await importingConnection(services.db, principal.workspaceId, input.connectionId));
  if (!connection)
    throw invalid(['connectionId'], 'no CRM connection of this workspace has this id', input.connectionId);
  if (connection.secretKeyId)
    return { import: await startAdminImport(services, principal, campaign.id, connection, input) };
  const customers = await customersOf(services, { ...input, connectionId: connection.id });
  if (customers.length > MAX_CONTACTS)
    throw invalid(
      [],
      `more than ${MAX_CONTACTS} customers match: narrow the filters (since, financialStatus, attributed)`,
      customers.length,
    );
  const contacts = z.array(contactInputSchema).parse(
    customers.map((customer) => ({
      phone: customer.phone,
      name: customer.name.trim().slice(0, 200) || undefined,
      metadata: {
        source: 'crm',
        connectionId: connection.id,
        orders: customer.orders,
        lastOrderAt: customer.lastOrderAt,
      },
    })),
  );
  return addContacts(services, principal, campaignId, contacts);
}

/** What the API shows of an Admin API import (GET /campaigns/{id}/crm-imports/{importId}). */
export function crmImportView(row: {
  id: string;
  campaignId: string;
  connectionId: string;
  provider: string;
  status: string;
  pages: number;
  customersRead: number;
  imported: number;
  skipped: unknown;
  throttledWaits: number;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}) {
  const skipped = row.skipped as Record<string, number>;
  return {
    id: row.id,
    campaignId: row.campaignId,
    connectionId: row.connectionId,
    provider: row.provider,
    status: row.status,
    pages: row.pages,
    customersRead: row.customersRead,
    imported: row.imported,
    skippedTotal: Object.values(skipped).reduce((sum, count) => sum + count, 0),
    skipped,
    throttledWaits: row.throttledWaits,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

/**
 * A connection holding an Admin API token: the store's customers are read through the Admin API by a durable
 * workflow (workflows/crm/crm-import.ts); the answer is the import, followed at GET /campaigns/{id}/crm-imports/{importId}.
 * The order filters (since, financialStatus, attributed) are about webhook orders: refused here.
 */
async function startAdminImport(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  connection: { id: string; adminProvider: string | null },
  input: CrmImportInput,
) {
  const filter = (['since', 'financialStatus', 'attributed'] as const).find((name) => input[name] !== undefined);
  if (filter)
    throw invalid(
      [filter],
      'a connection with an Admin API token imports every customer whose SMS marketing state is SUBSCRIBED: the order filters do not apply',
      input[filter],
    );
  const row = await insertCrmImport(services.db, {
    id: randomUUID(),
    workspaceId: principal.workspaceId,
    campaignId,
    connectionId: connection.id,
    provider: connection.adminProvider ?? 'shopify',
  });
  try {
    await startCrmImportWorkflow(services.temporal, services.taskQueue, row.id, {
      campaignId,
      workspaceId: principal.workspaceId,
    });
  } catch (error) {
    // No workflow, no import: the caller is told to try again (503) and finds no orphan in the list.
    await deleteUnstartedCrmImport(services.db, row.id);
    throw error;
  }
  return crmImportView(row);
}

/** The campaign's Admin API imports, newest first. */
export async function listCrmImports(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const rows = await latestImportsOfCampaign(services.db, campaign.id, 100);
  return { imports: rows.map(crmImportView) };
}

/** One import of the campaign; an unknown id, or another campaign's, is 403 forbidden. */
export async function findCrmImport(services: AppServices, principal: Principal, campaignId: string, importId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const row = isUuid(importId) ? await importOfCampaign(services.db, campaign.id, importId) : null;
  if (!row) throw forbidden();
  return crmImportView(row);
}
