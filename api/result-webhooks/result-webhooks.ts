import type { ResultWebhookDelivery, ResultWebhookEndpoint } from '../../generated/prisma/client';
import type { Principal } from '../door/principal';
import { forbidden } from '../../lib/refusal';
import type { AppServices } from '../app-services';
import { afterCursor, cursorPage, type CursorPosition } from '../http/pagination';
import { isUuid } from '../../lib/uuid';
import { WIPED_ENVELOPE } from '../../lib/secrets/sealed-rows';

/** The workspace's live endpoints, newest first. The secret is never read here. */
export async function listResultWebhookEndpoints({ db }: AppServices, principal: Principal) {
  return db.resultWebhookEndpoint.findMany({
    where: { workspaceId: principal.workspaceId, deletedAt: null },
    select: { id: true, url: true, description: true, createdAt: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

export function endpointView(endpoint: Pick<ResultWebhookEndpoint, 'id' | 'url' | 'description' | 'createdAt'>) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    createdAt: endpoint.createdAt.toISOString(),
  };
}

/**
 * Soft-deletes one of the workspace's endpoints: no event is sent to it any more, and deliveries still
 * being retried give up at their next attempt. An unknown id, another workspace's endpoint and one
 * already deleted get the same 403 forbidden from the same single query.
 */
export async function deleteResultWebhookEndpoint(
  { db }: AppServices,
  principal: Principal,
  id: string,
): Promise<void> {
  const { count } = isUuid(id)
    ? await db.resultWebhookEndpoint.updateMany({
        where: { id, workspaceId: principal.workspaceId, deletedAt: null },
        // A removed endpoint never signs again: its secret is not kept.
        data: { deletedAt: new Date(), secret: null, ...WIPED_ENVELOPE },
      })
    : { count: 0 };
  if (count === 0) throw forbidden();
}

/**
 * One page of the workspace's deliveries, newest first (ties broken by id), by keyset: a page is the
 * same whatever was delivered since the previous one. nextCursor is null on the last page.
 */
export async function listResultWebhookDeliveries(
  { db }: AppServices,
  principal: Principal,
  page: { limit: number; cursor?: CursorPosition },
) {
  const rows = await db.resultWebhookDelivery.findMany({
    where: { workspaceId: principal.workspaceId, ...afterCursor(page.cursor) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: page.limit + 1,
  });
  return cursorPage(rows, page.limit, deliveryView);
}

export function deliveryView(delivery: ResultWebhookDelivery) {
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    createdAt: delivery.createdAt.toISOString(),
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
  };
}
