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
import {
  listImportedCustomers,
  lockCrmImport,
  sharedCampaignStatus,
  type EligibleCustomer,
} from '../../lib/crm/crm-import-store';
import type { BoundActivities } from '../bind-activities';
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

/*
 * The activities of an Admin API import (workflows/crm/crm-import.ts). A page is read and applied in one activity: the
 * customers read after the import's cursor, the eligible ones listed on the campaign, the counters and the cursor
 * moved, all in one transaction that first checks the cursor is still the one the page was read after. A retried or
 * replayed page (a worker lost after the commit) finds the cursor moved and applies nothing; and every imported
 * customer holds a (campaign, customer) row, so no customer is listed twice by any import of the campaign.
 */

async function finish(db: Database, importId: string, status: 'completed' | 'failed', error: string | null) {
  await db.crmImport.updateMany({
    where: { id: importId, status: 'running' },
    data: { status, error, finishedAt: new Date(), updatedAt: new Date() },
  });
}

export async function importCrmPage(
  { db, secretsKeyring, crmImportPageSize, crmImportMaxImported }: CrmImportDependencies,
  { importId }: { importId: string },
): Promise<CrmImportStep> {
  const pageSize = crmImportPageSize ?? CUSTOMERS_PAGE_SIZE;
  const maxImported = crmImportMaxImported ?? MAX_CONTACTS;
  const row = await db.crmImport.findUnique({ where: { id: importId } });
  if (!row || row.status !== 'running') return { done: true, status: row?.status ?? 'gone', waitMs: 0 };
  const connection = await openCrmAdminConnection(db, secretsKeyring, row.connectionId);
  if (!connection) {
    await finish(db, importId, 'failed', 'the connection was deleted or no longer holds an Admin API token');
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
}

/** The import could not go on (its page failed beyond its retries, or the store refused the token): failed, with why. */
export async function failCrmImport(
  { db }: Pick<CrmImportDependencies, 'db'>,
  { importId, error }: { importId: string; error: string },
) {
  await finish(db, importId, 'failed', error.slice(0, 1000));
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
    const locked = await lockCrmImport(tx, row.id);
    if (!locked || locked.status !== 'running') return { done: true, status: locked?.status ?? 'gone' };
    if (locked.cursor !== row.cursor) return { done: false, status: 'running' };
    const campaignStatus = await sharedCampaignStatus(tx, row.campaignId);
    if (campaignStatus !== 'DRAFT') {
      await tx.crmImport.update({
        where: { id: row.id },
        data: {
          status: 'failed',
          error: `campaign_not_draft: the campaign is ${campaignStatus ?? 'gone'}; customers are added to a DRAFT campaign only`,
          finishedAt: new Date(),
          updatedAt: new Date(),
        },
      });
      return { done: true, status: 'failed' };
    }
    const skipped: Skipped = { ...locked.skipped };
    const eligible: EligibleCustomer[] = [];
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
      added = await listImportedCustomers(
        tx,
        { importId: row.id, workspaceId: row.workspaceId, campaignId: row.campaignId, connectionId: row.connectionId },
        eligible,
      );
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

export type CrmImportActivities = BoundActivities<{
  importCrmPage: typeof importCrmPage;
  failCrmImport: typeof failCrmImport;
}>;
