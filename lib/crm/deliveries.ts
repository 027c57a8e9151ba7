import type { Database } from '../database';

/**
 * Deliveries kept per connection (GET /crm/connections/{id}/deliveries lists them, newest first): the
 * worker's sweep deletes the connection's finished deliveries older than its latest CRM_DELIVERIES_KEPT.
 * A delivery still waiting to be processed (received) is never deleted.
 */
export const CRM_DELIVERIES_KEPT = 100;

/** A delivery still `received` this long after it arrived is started again by the worker's sweep. */
export const CRM_DELIVERY_SWEEP_AGE_MS = 15_000;

/**
 * Deletes every connection's finished deliveries beyond its latest CRM_DELIVERIES_KEPT (see there): the
 * worker's sweep, not the receiver, so that concurrent webhooks of one shop never queue on each other's
 * DELETE. Answers how many were deleted.
 */
export async function trimCrmDeliveries(db: Database): Promise<number> {
  return db.$executeRaw`
    DELETE FROM "CrmWebhookDelivery" d
     USING (SELECT id, row_number() OVER (PARTITION BY "connectionId" ORDER BY "receivedAt" DESC, id DESC) AS place
              FROM "CrmWebhookDelivery") ranked
     WHERE d.id = ranked.id AND ranked.place > ${CRM_DELIVERIES_KEPT} AND d.status <> 'received'`;
}

/**
 * The deliveries still `received` older than `ageMs` (Temporal could not be reached when they arrived, or their start
 * was lost), oldest first, at most 500: what the worker's sweep starts again (worker/crm-delivery-sweep.ts).
 */
export async function stalledCrmDeliveryIds(db: Database, ageMs = CRM_DELIVERY_SWEEP_AGE_MS): Promise<string[]> {
  const stalled = await db.crmWebhookDelivery.findMany({
    where: { status: 'received', receivedAt: { lt: new Date(Date.now() - ageMs) } },
    orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
    take: 500,
    select: { id: true },
  });
  return stalled.map(({ id }) => id);
}
