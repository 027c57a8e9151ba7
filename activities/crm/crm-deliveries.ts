import { Prisma } from '../../generated/prisma/client';
import { applyOrderWebhook, ORDER_WEBHOOK_TOPICS } from '../../lib/commerce/apply-order';
import type { Database } from '../../lib/database';
import type { BoundActivities } from '../bind-activities';

/** What processing a delivery found: its final status, and the order it placed or changed. */
export interface CrmDeliveryOutcome {
  status: string;
  orderId: string | null;
  /** The order is new (placed): its order notifications are to be scheduled. */
  newOrder: boolean;
}

export interface CrmDeliveryDependencies {
  db: Database;
}

/*
 * The activities of one store webhook delivery (workflows/crm/crm-delivery.ts), stored `received` with its
 * payload by the receiver (api/crm/crm-webhooks.ts). Each acts only on a delivery still `received`,
 * so a workflow started twice (the receiver, then the sweep) changes nothing twice.
 */

/**
 * An order topic (orders/create, orders/updated, orders/cancelled) is applied to the connection's
 * workspace's commerce orders (lib/commerce/apply-order.ts); any other topic is to be `ignored`. The
 * delivery stays `received` until finishCrmDelivery, so a retry applies it again (idempotently: the
 * same updated_at changes nothing) and still knows its order. A delivery already finished (or gone,
 * trimmed) is answered as it stands, without an order.
 */
export async function processCrmDelivery(
  { db }: CrmDeliveryDependencies,
  { deliveryId }: { deliveryId: string },
): Promise<CrmDeliveryOutcome> {
  const delivery = await db.crmWebhookDelivery.findUnique({
    where: { id: deliveryId },
    select: { status: true, topic: true, payload: true, connectionId: true },
  });
  if (!delivery || delivery.status !== 'received')
    return { status: delivery?.status ?? 'gone', orderId: null, newOrder: false };
  if (!(ORDER_WEBHOOK_TOPICS as readonly string[]).includes(delivery.topic))
    return { status: 'ignored', orderId: null, newOrder: false };
  const connection = await db.crmConnection.findUniqueOrThrow({
    where: { id: delivery.connectionId },
    select: { workspaceId: true },
  });
  const applied = await applyOrderWebhook(db, {
    connectionId: delivery.connectionId,
    workspaceId: connection.workspaceId,
    topic: delivery.topic,
    payload: delivery.payload,
  });
  // An order placed: created by this delivery, or announced by orders/create (a retry finds it made).
  const newOrder = applied.created || delivery.topic === 'orders/create';
  return { status: 'processed', orderId: applied.orderId, newOrder };
}

/** The delivery applied (processed) or not an order (ignored): its payload dropped, processedAt set. */
export async function finishCrmDelivery(
  { db }: CrmDeliveryDependencies,
  { deliveryId, status }: { deliveryId: string; status: string },
) {
  await db.crmWebhookDelivery.updateMany({
    where: { id: deliveryId, status: 'received' },
    data: { status, payload: Prisma.DbNull, processedAt: new Date() },
  });
}

/** The delivery could not be applied within its retries: `failed` with the reason, its payload kept. */
export async function failCrmDelivery(
  { db }: CrmDeliveryDependencies,
  { deliveryId, processingError }: { deliveryId: string; processingError: string },
) {
  await db.crmWebhookDelivery.updateMany({
    where: { id: deliveryId, status: 'received' },
    data: { status: 'failed', processingError, processedAt: new Date() },
  });
}

export type CrmDeliveryActivities = BoundActivities<{
  processCrmDelivery: typeof processCrmDelivery;
  finishCrmDelivery: typeof finishCrmDelivery;
  failCrmDelivery: typeof failCrmDelivery;
}>;
