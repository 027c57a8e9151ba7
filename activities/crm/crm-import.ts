import { ApplicationFailure } from '@temporalio/common';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { openCrmAdminConnection } from '../../lib/crm/admin-token';
import type { CrmImportStep } from '../../lib/crm/crm-import';
import {
  AdminAccessRefused,
  CUSTOMERS_PAGE_SIZE,
  customerVerdict,
  readCustomersPage,
  throttleWaitMs,
  type ShopifyCustomer,
} from '../../lib/crm/shopify-admin';
import type { Keyring } from '../../lib/secrets/keyring';
import { MAX_CONTACTS } from '../../lib/campaigns/contact-limits';
import { heartbeatIfInActivity } from '../dial-ladder/calls';

export interface CrmImportDependencies {
  db: Database;
  /** SECRETS_KEYS: opens the connections' Admin API tokens. */
  secretsKeyring?: Keyring;
  /** Customers per page (default CUSTOMERS_PAGE_SIZE, Shopify's maximum); tests may take smaller pages. */
  crmImportPageSize?: number;
  /** The most customers one import lists (default MAX_CONTACTS, spec 8's contacts of one request); tests lower it. */
  crmImportMaxImported?: number;
}

/** Shortest wait after a THROTTLED answer, whatever the cost extension says. */
const MIN_THROTTLED_WAIT_MS = 100;

type Skipped = Record<string, number>;

const addSkipped = (into: Skipped, reason: string, count = 1) => {
  if (count > 0) into[reason] = (into[reason] ?? 0) + count;
};

/**
 * The activities of an Admin API import (workflows/crm/crm-import.ts). A page is read and applied in one activity: the
 * customers read after the import's cursor, the eligible ones listed on the campaign, the counters and the cursor
 * moved, all in one transaction that first checks the cursor is still the one the page was read after. A retried or
 * replayed page (a worker lost after the commit) finds the cursor moved and applies nothing; and every imported
 * customer holds a (campaign, customer) row, so no customer is listed twice by any import of the campaign.
 */
export function createCrmImportActivities({
  db,
  secretsKeyring,
  crmImportPageSize,
  crmImportMaxImported,
}: CrmImportDependencies) {
  const pageSize = crmImportPageSize ?? CUSTOMERS_PAGE_SIZE;
  const maxImported = crmImportMaxImported ?? MAX_CONTACTS;

  async function finish(importId: string, status: 'completed' | 'failed', error: string | null) {
    await db.crmImport.updateMany({
      where: { id: importId, status: 'running' },
      data: { status, error, finishedAt: new Date(), updatedAt: new Date() },
    });
  }

  return {
    async importCrmPage({ importId }: { importId: string }): Promise<CrmImportStep> {
      const row = await db.crmImport.findUnique({ where: { id: importId } });
      if (!row || row.status !== 'running') return { done: true, status: row?.status ?? 'gone', waitMs: 0 };
      const connection = await openCrmAdminConnection(db, secretsKeyring, row.connectionId);
      if (!connection) {
        await finish(importId, 'failed', 'the connection was deleted or no longer holds an Admin API token');
        return { done: true, status: 'failed', waitMs: 0 };
      }
      heartbeatIfInActivity();
      let page;
      try {
        page = await readCustomersPage(connection, row.cursor, pageSize);
      } catch (error) {
        if (error instanceof AdminAccessRefused)
          throw ApplicationFailure.create({
            message: error.message,
            type: ErrorCode.provider_error,
            nonRetryable: true,
          });
        throw error;
      }
      if (page.kind === 'throttled') {
        await db.crmImport.updateMany({
          where: { id: importId, status: 'running', cursor: row.cursor },
          data: { throttledWaits: { increment: 1 }, updatedAt: new Date() },
        });
        const requested = page.cost?.requestedQueryCost ?? pageSize;
        return {
          done: false,
          status: 'running',
          waitMs: Math.max(throttleWaitMs(page.cost, requested), MIN_THROTTLED_WAIT_MS),
        };
      }
      heartbeatIfInActivity();
      const applied = await applyPage(db, row, page.customers, page.hasNextPage ? page.endCursor : null, maxImported);
      // The next page asks for as much as this one: wait until the bucket holds it.
      const waitMs = applied.done || !page.cost ? 0 : throttleWaitMs(page.cost, page.cost.requestedQueryCost);
      if (waitMs > 0)
        await db.crmImport.updateMany({ where: { id: importId }, data: { throttledWaits: { increment: 1 } } });
      return { ...applied, waitMs };
    },

    /** The import could not go on (its page failed beyond its retries, or the store refused the token): failed, with why. */
    async failCrmImport({ importId, error }: { importId: string; error: string }) {
      await finish(importId, 'failed', error.slice(0, 1000));
    },
  };
}

interface ImportRow {
  id: string;
  workspaceId: string;
  campaignId: string;
  connectionId: string;
  cursor: string | null;
}

/** One page applied, or nothing when the import's cursor moved past it (applied already) or the import ended. */
async function applyPage(
  db: Database,
  row: ImportRow,
  customers: readonly ShopifyCustomer[],
  nextCursor: string | null,
  maxImported: number,
): Promise<Omit<CrmImportStep, 'waitMs'>> {
  return db.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<
      Array<{ status: string; cursor: string | null; skipped: Skipped; imported: number }>
    >`SELECT status, cursor, skipped, imported FROM "CrmImport" WHERE id = ${row.id}::uuid FOR UPDATE`;
    if (!locked || locked.status !== 'running') return { done: true, status: locked?.status ?? 'gone' };
    if (locked.cursor !== row.cursor) return { done: false, status: 'running' };
    const [campaign] = await tx.$queryRaw<Array<{ status: string }>>`
      SELECT status::text FROM "Campaign" WHERE id = ${row.campaignId}::uuid FOR SHARE`;
    if (campaign?.status !== 'DRAFT') {
      await tx.crmImport.update({
        where: { id: row.id },
        data: {
          status: 'failed',
          error: `campaign_not_draft: the campaign is ${campaign?.status ?? 'gone'}; customers are added to a DRAFT campaign only`,
          finishedAt: new Date(),
          updatedAt: new Date(),
        },
      });
      return { done: true, status: 'failed' };
    }
    const skipped: Skipped = { ...locked.skipped };
    const eligible: Array<{ customerId: string; phone: string; name: string | null }> = [];
    for (const customer of customers) {
      const verdict = customerVerdict(customer);
      if (verdict.import && eligible.length >= maxImported - locked.imported) addSkipped(skipped, 'limit_reached');
      else if (verdict.import)
        eligible.push({
          customerId: customer.id,
          phone: verdict.phone,
          name: customer.displayName.trim().slice(0, 200) || null,
        });
      else addSkipped(skipped, verdict.reason);
    }
    let added = 0;
    if (eligible.length > 0) {
      // Imports into one campaign take turns with POST /contacts (api/campaign-data/contacts.ts takes the same lock).
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`contacts:${row.campaignId}`}, 0))`;
      const metadata = eligible.map((customer) =>
        JSON.stringify({ source: 'crm', connectionId: row.connectionId, customerId: customer.customerId }),
      );
      const [counted] = await tx.$queryRaw<Array<{ added: number }>>`
        WITH input AS (
          SELECT customer_id, phone, name, metadata, ord
            FROM unnest(${eligible.map((c) => c.customerId)}::text[], ${eligible.map((c) => c.phone)}::text[],
                        ${eligible.map((c) => c.name)}::text[], ${metadata}::jsonb[])
                 WITH ORDINALITY AS t(customer_id, phone, name, metadata, ord)
        ), claimed AS (
          INSERT INTO "CrmImportedCustomer" ("campaignId", "customerId", "importId", phone)
          SELECT ${row.campaignId}::uuid, customer_id, ${row.id}::uuid, phone FROM input
          ON CONFLICT DO NOTHING
          RETURNING "customerId"
        ), fresh AS (
          SELECT DISTINCT ON (phone) input.* FROM input JOIN claimed ON claimed."customerId" = input.customer_id
           ORDER BY phone, ord
        ), contact AS (
          INSERT INTO "Contact" (id, "workspaceId", phone, name, metadata)
          SELECT gen_random_uuid(), ${row.workspaceId}::uuid, phone, name, metadata FROM fresh ORDER BY phone
          ON CONFLICT ("workspaceId", phone) DO UPDATE SET phone = EXCLUDED.phone
          RETURNING id, phone
        ), listed AS (
          INSERT INTO "CampaignContact" ("campaignId", "contactId")
          SELECT ${row.campaignId}::uuid, contact.id FROM contact JOIN fresh USING (phone) ORDER BY fresh.ord
          ON CONFLICT DO NOTHING
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM listed)::int AS added`;
      added = counted!.added;
      // Already imported into this campaign, twice in the store, or a phone the list holds already.
      addSkipped(skipped, 'duplicate', eligible.length - added);
    }
    const done = nextCursor === null;
    await tx.crmImport.update({
      where: { id: row.id },
      data: {
        cursor: nextCursor ?? row.cursor,
        pages: { increment: 1 },
        customersRead: { increment: customers.length },
        imported: { increment: added },
        skipped,
        updatedAt: new Date(),
        ...(done && { status: 'completed', finishedAt: new Date() }),
      },
    });
    return { done, status: done ? 'completed' : 'running' };
  });
}

export type CrmImportActivities = ReturnType<typeof createCrmImportActivities>;
