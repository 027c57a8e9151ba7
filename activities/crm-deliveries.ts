import { Prisma } from '../generated/prisma/client';
import { applyOrderWebhook, ORDER_WEBHOOK_TOPICS } from '../lib/commerce/apply-order';
import type { Database } from '../lib/database';

export interface CrmDeliveryDependencies {
  db: Database;
}

/**
 * The activities of one store webhook delivery (workflows/crm-delivery.ts), stored `received` with its
 * payload by the receiver (api/services/crm-webhooks.ts). Each acts only on a delivery still `received`,
 * so a workflow started twice (the receiver, then the sweep) changes nothing twice.
 */
export function createCrmDeliveryActivities({ db }: CrmDeliveryDependencies) {
  return {
    /**
     * An order topic (orders/create, orders/updated, orders/cancelled) is applied to the connection's
     * workspace's commerce orders (lib/commerce/apply-order.ts), then the delivery is `processed`; any
     * other topic is `ignored`. Either way its payload is dropped and processedAt set. A delivery already
     * finished (or gone, trimmed) is answered as it stands.
     */
    async processCrmDelivery({ deliveryId }: { deliveryId: string }): Promise<{ status: string }> {
      const delivery = await db.crmWebhookDelivery.findUnique({
        where: { id: deliveryId },
        select: { status: true, topic: true, payload: true, connectionId: true },
      });
      if (!delivery || delivery.status !== 'received') return { status: delivery?.status ?? 'gone' };
      let status = 'ignored';
      if ((ORDER_WEBHOOK_TOPICS as readonly string[]).includes(delivery.topic)) {
        const connection = await db.crmConnection.findUniqueOrThrow({
          where: { id: delivery.connectionId },
          select: { workspaceId: true },
        });
        await applyOrderWebhook(db, {
          connectionId: delivery.connectionId,
          workspaceId: connection.workspaceId,
          topic: delivery.topic,
          payload: delivery.payload,
        });
        status = 'processed';
      }
      await db.crmWebhookDelivery.updateMany({
        where: { id: deliveryId, status: 'received' },
        data: { status, payload: Prisma.DbNull, processedAt: new Date() },
      });
      return { status };
    },
    /** The delivery could not be applied within its retries: `failed` with the reason, its payload kept. */
    async failCrmDelivery({ deliveryId, processingError }: { deliveryId: string; processingError: string }) {
      await db.crmWebhookDelivery.updateMany({
        where: { id: deliveryId, status: 'received' },
        data: { status: 'failed', processingError, processedAt: new Date() },
      });
    },
  };
}

export type CrmDeliveryActivities = ReturnType<typeof createCrmDeliveryActivities>;
