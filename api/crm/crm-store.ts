import type { Prisma } from '../../generated/prisma/client';
import { WEBHOOK_SECRET_COLUMNS, WIPED_WEBHOOK_SECRET } from '../../lib/crm/webhook-secret';
import { WIPED_ENVELOPE } from '../../lib/secrets/sealed-rows';
import type { AppServices } from '../app-services';

/** The CRM API's SQL (docs/features/crm.md): connections, and the deliveries their webhooks bring. */

type Db = AppServices['db'];

/** What the API shows of a connection: never its secret, nor its Admin API token (only whether it holds one). */
const CONNECTION_FIELDS = {
  id: true,
  kind: true,
  shopDomain: true,
  createdAt: true,
  adminProvider: true,
  adminTokenSetAt: true,
} as const;

/** The workspace's live connections, newest first. */
export async function liveConnectionsOfWorkspace(db: Db, workspaceId: string) {
  return db.crmConnection.findMany({
    where: { workspaceId, deletedAt: null },
    select: CONNECTION_FIELDS,
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
}

/** A live connection; `where` is findOwned's (api/http/owned.ts). */
export async function liveConnectionWhere(db: Db, where: { id: string; workspaceId: string }) {
  return db.crmConnection.findFirst({ where: { ...where, deletedAt: null }, select: CONNECTION_FIELDS });
}

/** A live connection with what verifies its webhooks (whatever its workspace: the URL names it). */
export async function liveConnectionSecret(db: Db, id: string) {
  return db.crmConnection.findFirst({ where: { id, deletedAt: null }, select: WEBHOOK_SECRET_COLUMNS });
}

/** Deleted, its Admin API token and its webhook signing secret wiped; its orders and deliveries are kept. */
export async function markConnectionDeleted(db: Db, id: string): Promise<void> {
  await db.crmConnection.updateMany({
    where: { id, deletedAt: null },
    data: { deletedAt: new Date(), ...WIPED_ENVELOPE, ...WIPED_WEBHOOK_SECRET },
  });
}

/** The connection's latest `take` deliveries, newest first, as shapes: never a value. */
export async function latestDeliveriesOf(db: Db, connectionId: string, take: number) {
  return db.crmWebhookDelivery.findMany({
    where: { connectionId },
    orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
    take,
    select: { id: true, receivedAt: true, status: true, topic: true, processingError: true, shape: true },
  });
}

/** The delivery, unless one of the connection holds its event id already; answers whether it was inserted. */
export async function insertDeliveryOnce(db: Db, delivery: Prisma.CrmWebhookDeliveryCreateManyInput): Promise<boolean> {
  const { count } = await db.crmWebhookDelivery.createMany({ data: [delivery], skipDuplicates: true });
  return count > 0;
}

/** The delivery first received with this event id. */
export async function deliveryOfEvent(db: Db, connectionId: string, eventId: string) {
  return db.crmWebhookDelivery.findUniqueOrThrow({
    where: { connectionId_eventId: { connectionId, eventId } },
    select: { id: true, status: true },
  });
}

export interface CustomerRow {
  phone: string;
  name: string;
  orders: number;
  /** ISO 8601, UTC. */
  lastOrderAt: string;
}

/**
 * The customers of a connection's orders matching the filters: one per distinct customer phone (orders
 * without a phone and cancelled orders are left out), named as on their latest order, first customer
 * first, at most `limit`.
 */
export async function customersOfOrders(
  sql: AppServices['sql'],
  input: { connectionId: string; since?: string; financialStatus?: string; attributed?: boolean },
  limit: number,
): Promise<CustomerRow[]> {
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
      LIMIT ${limit}`,
    [input.connectionId, input.since ?? null, input.financialStatus ?? null, input.attributed ?? null],
  );
  return rows;
}

/** A live connection of the workspace, with what tells how it imports (an Admin API token or its orders), or null. */
export async function importingConnection(db: Db, workspaceId: string, id: string) {
  return db.crmConnection.findFirst({
    where: { id, workspaceId, deletedAt: null },
    select: { id: true, secretKeyId: true, adminProvider: true },
  });
}

export async function insertCrmImport(db: Db, data: Prisma.CrmImportUncheckedCreateInput) {
  return db.crmImport.create({ data });
}

/** An import whose workflow never started goes; failing to delete it is no failure (the caller is told to try again). */
export async function deleteUnstartedCrmImport(db: Db, id: string): Promise<void> {
  await db.crmImport.delete({ where: { id } }).catch(() => undefined);
}

/** The campaign's latest `take` imports, newest first. */
export async function latestImportsOfCampaign(db: Db, campaignId: string, take: number) {
  return db.crmImport.findMany({
    where: { campaignId },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    take,
  });
}

export async function importOfCampaign(db: Db, campaignId: string, id: string) {
  return db.crmImport.findFirst({ where: { id, campaignId } });
}
