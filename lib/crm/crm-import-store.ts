import type { Prisma } from '../../generated/prisma/client';

/**
 * An Admin API import's SQL (activities/crm/crm-import.ts): each runs inside the page's one transaction, which first
 * locks the import's row and then lists the page's customers (docs/features/crm.md).
 */

/** The import's counters as they stand; `skipped` by reason. */
export interface LockedCrmImport {
  status: string;
  cursor: string | null;
  skipped: Record<string, number>;
  imported: number;
}

/** The import's row, locked until the transaction ends: a second page of the same import waits for this one. */
export async function lockCrmImport(
  tx: Prisma.TransactionClient,
  importId: string,
): Promise<LockedCrmImport | undefined> {
  const [locked] = await tx.$queryRaw<LockedCrmImport[]>`
    SELECT status, cursor, skipped, imported FROM "CrmImport" WHERE id = ${importId}::uuid FOR UPDATE`;
  return locked;
}

/** The campaign's status, held as it is (FOR SHARE) until the transaction ends; undefined once it is gone. */
export async function sharedCampaignStatus(
  tx: Prisma.TransactionClient,
  campaignId: string,
): Promise<string | undefined> {
  const [campaign] = await tx.$queryRaw<Array<{ status: string }>>`
    SELECT status::text FROM "Campaign" WHERE id = ${campaignId}::uuid FOR SHARE`;
  return campaign?.status;
}

/** Where an import lists its customers. */
export interface CrmImportTarget {
  importId: string;
  workspaceId: string;
  campaignId: string;
  connectionId: string;
}

export interface EligibleCustomer {
  customerId: string;
  phone: string;
  name: string | null;
}

/**
 * Lists the customers on the campaign, in their order, as contacts of the workspace (one per phone; an existing one
 * kept), each claimed once per campaign by its (campaign, customer) row; answers how many were listed. A customer
 * imported into the campaign before, a second customer of the same phone, or a phone the list holds already is not.
 */
export async function listImportedCustomers(
  tx: Prisma.TransactionClient,
  target: CrmImportTarget,
  eligible: readonly EligibleCustomer[],
): Promise<number> {
  // Imports into one campaign take turns with POST /contacts (api/campaign-data/contacts.ts takes the same lock).
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`contacts:${target.campaignId}`}, 0))`;
  const metadata = eligible.map((customer) =>
    JSON.stringify({ source: 'crm', connectionId: target.connectionId, customerId: customer.customerId }),
  );
  const [counted] = await tx.$queryRaw<Array<{ added: number }>>`
    WITH input AS (
      SELECT customer_id, phone, name, metadata, ord
        FROM unnest(${eligible.map((c) => c.customerId)}::text[], ${eligible.map((c) => c.phone)}::text[],
                    ${eligible.map((c) => c.name)}::text[], ${metadata}::jsonb[])
             WITH ORDINALITY AS t(customer_id, phone, name, metadata, ord)
    ), claimed AS (
      INSERT INTO "CrmImportedCustomer" ("campaignId", "customerId", "importId", phone)
      SELECT ${target.campaignId}::uuid, customer_id, ${target.importId}::uuid, phone FROM input
      ON CONFLICT DO NOTHING
      RETURNING "customerId"
    ), fresh AS (
      SELECT DISTINCT ON (phone) input.* FROM input JOIN claimed ON claimed."customerId" = input.customer_id
       ORDER BY phone, ord
    ), contact AS (
      INSERT INTO "Contact" (id, "workspaceId", phone, name, metadata)
      SELECT gen_random_uuid(), ${target.workspaceId}::uuid, phone, name, metadata FROM fresh ORDER BY phone
      ON CONFLICT ("workspaceId", phone) DO UPDATE SET phone = EXCLUDED.phone
      RETURNING id, phone
    ), listed AS (
      INSERT INTO "CampaignContact" ("campaignId", "contactId")
      SELECT ${target.campaignId}::uuid, contact.id FROM contact JOIN fresh USING (phone) ORDER BY fresh.ord
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM listed)::int AS added`;
  return counted!.added;
}
