import type { ResultWebhookDelivery, ResultWebhookEndpoint } from '../../generated/prisma/client';
import type { Principal } from '../door/principal';
import { forbidden } from '../../lib/refusal';
import type { AppServices } from '../app-services';
import { cursorPage, type CursorPosition } from '../http/pagination';
import { isUuid } from '../../lib/uuid';
import { deliveriesOfWorkspacePage, liveEndpointsOfWorkspace, markEndpointDeleted } from './result-webhook-store';

/** The workspace's live endpoints, newest first. The secret is never read here. */
export async function listResultWebhookEndpoints({ db }: AppServices, principal: Principal) {
  return liveEndpointsOfWorkspace(db, principal.workspaceId);
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
  // A removed endpoint never signs again: its secret is not kept.
  const removed = isUuid(id) && (await markEndpointDeleted(db, principal.workspaceId, id));
  if (!removed) throw forbidden();
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
  const rows = await deliveriesOfWorkspacePage(db, principal.workspaceId, page);
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
