import { randomUUID } from 'node:crypto';
import type { Database } from '../../lib/database';

/**
 * A store's order as the store's webhook records it (docs/features/commerce.md): #1001, 49.90 EUR, paid and not yet
 * fulfilled, from Ana Lima at `customerPhone` (null: an order without a phone), placed now unless `placedAt` says when.
 */
export function insertPaidOrder(
  db: Database,
  connection: { id: string; workspaceId: string },
  { customerPhone, placedAt = new Date() }: { customerPhone: string | null; placedAt?: Date },
) {
  return db.commerceOrder.create({
    data: {
      workspaceId: connection.workspaceId,
      connectionId: connection.id,
      externalOrderId: randomUUID(),
      orderNumber: '#1001',
      currency: 'EUR',
      totalPrice: '49.90',
      financialStatus: 'paid',
      fulfillmentStatus: 'unfulfilled',
      customerName: 'Ana Lima',
      customerPhone,
      placedAt,
    },
  });
}
