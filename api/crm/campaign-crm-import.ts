import { ZodError, z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import { isUuid } from '../../lib/uuid';
import { MAX_CONTACTS, addContacts, contactInputSchema } from '../campaign-data/contacts';
import type { AppServices } from '../app-services';

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

interface CustomerRow {
  phone: string;
  name: string;
  orders: number;
  /** ISO 8601, UTC. */
  lastOrderAt: string;
}

/**
 * The customers of a connection's orders matching the filters: one per distinct customer phone (orders
 * without a phone and cancelled orders are left out), named as on their latest order, first customer
 * first. One more than MAX_CONTACTS is read, to refuse an import too large to add at once.
 */
async function customersOf({ sql }: AppServices, input: CrmImportInput): Promise<CustomerRow[]> {
  const { rows } = await sql.query<CustomerRow>(
    `SELECT "customerPhone" AS phone,
            (array_agg("customerName" ORDER BY "placedAt" DESC, id))[1] AS name,
            count(*)::int AS orders,
            to_char(max("placedAt"), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "lastOrderAt"
       FROM "CommerceOrder"
      WHERE "connectionId" = $1::uuid AND "customerPhone" IS NOT NULL AND "cancelledAt" IS NULL
        AND ($2::timestamptz IS NULL OR "placedAt" >= ($2::timestamptz AT TIME ZONE 'UTC'))
        AND ($3::text IS NULL OR "financialStatus" = $3::text)
        AND ($4::boolean IS NULL OR "attributedToService" = $4::boolean)
      GROUP BY "customerPhone"
      ORDER BY min("placedAt"), "customerPhone"
      LIMIT ${MAX_CONTACTS + 1}`,
    [input.connectionId, input.since ?? null, input.financialStatus ?? null, input.attributed ?? null],
  );
  return rows;
}

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
    isUuid(input.connectionId) &&
    (await services.db.crmConnection.findFirst({
      where: { id: input.connectionId, workspaceId: principal.workspaceId, deletedAt: null },
      select: { id: true },
    }));
  if (!connection)
    throw invalid(['connectionId'], 'no CRM connection of this workspace has this id', input.connectionId);
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
