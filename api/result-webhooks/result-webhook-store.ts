import { WIPED_ENVELOPE } from '../../lib/secrets/sealed-rows';
import { afterCursor, type CursorPosition } from '../http/pagination';
import type { AppServices } from '../app-services';

/** The result webhooks API's SQL (docs/features/result-webhooks.md): endpoints and their deliveries. */

type Db = AppServices['db'];

/** The workspace's live endpoints, newest first. The secret is never read here. */
export async function liveEndpointsOfWorkspace(db: Db, workspaceId: string) {
  return db.resultWebhookEndpoint.findMany({
    where: { workspaceId, deletedAt: null },
    select: { id: true, url: true, description: true, createdAt: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
}

/** Removed, its secret wiped (a removed endpoint never signs again). Answers whether a live endpoint was removed. */
export async function markEndpointDeleted(db: Db, workspaceId: string, id: string): Promise<boolean> {
  const { count } = await db.resultWebhookEndpoint.updateMany({
    where: { id, workspaceId, deletedAt: null },
    data: { deletedAt: new Date(), secret: null, ...WIPED_ENVELOPE },
  });
  return count > 0;
}

/** A page of the workspace's deliveries, newest first, by keyset, one more than the limit. */
export async function deliveriesOfWorkspacePage(
  db: Db,
  workspaceId: string,
  page: { limit: number; cursor?: CursorPosition },
) {
  return db.resultWebhookDelivery.findMany({
    where: { workspaceId, ...afterCursor(page.cursor) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: page.limit + 1,
  });
}
