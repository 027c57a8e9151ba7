import type { RequestHandler } from 'express';
import type { Principal } from '../auth/principal';
import { afterCursor, cursorPage, type CursorPosition } from '../http/pagination';
import { findOwnedCampaign, isUuid } from './campaigns';
import type { AppServices } from './index';

/** Paths under which a request is about one campaign. */
export const CAMPAIGN_PATH_PREFIXES = ['/campaigns/{id}', '/whatsapp/campaigns/{id}', '/v1/campaigns/{campaignId}'] as const;

/** The campaign id in a route's path, if the route is about one campaign. */
export function campaignParamOf(path: string): 'id' | 'campaignId' | null {
  if (path.startsWith('/campaigns/{id}') || path.startsWith('/whatsapp/campaigns/{id}')) return 'id';
  if (path.startsWith('/v1/campaigns/{campaignId}')) return 'campaignId';
  return null;
}

/**
 * Logs every request an authenticated caller made against one of its workspace's campaigns, once the
 * answer is sent: method, path (without the query), status, key id, request id. Never a header, so
 * never the key. Off the request's path: a lost log line never fails or slows a request.
 */
export function campaignRequestLogger({ sql }: AppServices, param: 'id' | 'campaignId'): RequestHandler {
  return (req, res, next) => {
    res.once('finish', () => {
      const principal = res.locals.principal as Principal | undefined;
      const campaignId = req.params[param];
      if (!principal || typeof campaignId !== 'string' || !isUuid(campaignId)) return;
      sql.query({
        name: 'record_api_log',
        text: `INSERT INTO "ApiLog" (id, "workspaceId", "campaignId", method, path, status, "keyId", "requestId")
               SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3, $4, $5, $6::uuid, $7::uuid
                WHERE EXISTS (SELECT 1 FROM "Campaign" WHERE id = $2::uuid AND "workspaceId" = $1::uuid)`,
        values: [principal.workspaceId, campaignId, req.method, req.originalUrl.split('?')[0], res.statusCode, principal.keyId, res.locals.requestId],
      }).catch(() => undefined);
    });
    next();
  };
}

export async function listApiLogs(services: AppServices, principal: Principal, campaignId: string, query: { limit: number; cursor?: CursorPosition }) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const [rows, total] = await Promise.all([
    services.db.apiLog.findMany({
      where: { campaignId: campaign.id, ...afterCursor(query.cursor) }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: query.limit + 1,
    }),
    services.db.apiLog.count({ where: { campaignId: campaign.id } }),
  ]);
  return {
    ...cursorPage(rows, query.limit, (row) => ({
      id: row.id, method: row.method, path: row.path, status: row.status, keyId: row.keyId, requestId: row.requestId, createdAt: row.createdAt.toISOString(),
    })),
    total,
  };
}

/** Deletes API logs older than the retention; every API process runs it now and then. */
export async function trimApiLogs({ sql }: Pick<AppServices, 'sql'>, retentionDays: number): Promise<number> {
  const { rowCount } = await sql.query('DELETE FROM "ApiLog" WHERE "createdAt" < now() - make_interval(days => $1)', [retentionDays]);
  return rowCount ?? 0;
}
