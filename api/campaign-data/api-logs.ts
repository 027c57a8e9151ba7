import type { Express, RequestHandler } from 'express';
import type { Principal } from '../door/principal';
import { afterCursor, cursorPage, type CursorPosition } from '../http/pagination';
import { expressPath } from '../http/route';
import { findOwnedCampaign } from '../campaigns/campaigns';
import { isUuid } from '../../lib/uuid';
import type { AppServices } from '../app-services';
import type { SqlPool } from '../../lib/sql-pool';
import { addLogContext } from '../../lib/log';
import type { RequestContext } from '../http/observe-requests';

/** Paths under which a request is about one campaign. */
export const CAMPAIGN_PATH_PREFIXES = [
  '/campaigns/{id}',
  '/whatsapp/campaigns/{id}',
  '/v1/campaigns/{campaignId}',
] as const;

/** The campaign id in a route's path, if the route is about one campaign. */
export function campaignParamOf(path: string): 'id' | 'campaignId' | null {
  if (path.startsWith('/campaigns/{id}') || path.startsWith('/whatsapp/campaigns/{id}')) return 'id';
  if (path.startsWith('/v1/campaigns/{campaignId}')) return 'campaignId';
  return null;
}

interface ApiLogLine {
  workspaceId: string;
  campaignId: string;
  method: string;
  path: string;
  status: number;
  keyId: string;
  requestId: string;
  answeredAt: Date;
}

const MAX_LINES_PER_INSERT = 1000;

/**
 * Writes API log lines in multi-row INSERTs: a line is written at once when nothing is being written,
 * and lines that arrive meanwhile go together in the next statement. Under load that is one statement
 * for many requests instead of one each, on the connections the requests themselves need.
 */
export function createApiLogRecorder(sql: SqlPool) {
  const queued: ApiLogLine[] = [];
  let writing: Promise<void> | null = null;
  const writeQueued = async () => {
    while (queued.length) {
      const lines = queued.splice(0, MAX_LINES_PER_INSERT);
      await sql
        .query({
          name: 'record_api_logs',
          // A campaign outside the caller's workspace, or none, gets no log line.
          // createdAt is each request's own answer time, not the statement's: the lines of one INSERT would otherwise
          // share one time and list in id order, not in the order the requests were answered.
          text: `INSERT INTO "ApiLog" (id, "workspaceId", "campaignId", method, path, status, "keyId", "requestId", "createdAt")
               SELECT gen_random_uuid(), l.workspace_id, l.campaign_id, l.method, l.path, l.status, l.key_id, l.request_id,
                      l.answered_at AT TIME ZONE 'UTC'
                 FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::uuid[], $7::uuid[], $8::timestamptz[])
                   AS l(workspace_id, campaign_id, method, path, status, key_id, request_id, answered_at)
                WHERE EXISTS (SELECT 1 FROM "Campaign" c WHERE c.id = l.campaign_id AND c."workspaceId" = l.workspace_id)`,
          values: [
            lines.map((line) => line.workspaceId),
            lines.map((line) => line.campaignId),
            lines.map((line) => line.method),
            lines.map((line) => line.path),
            lines.map((line) => line.status),
            lines.map((line) => line.keyId),
            lines.map((line) => line.requestId),
            lines.map((line) => line.answeredAt),
          ],
        })
        .catch(() => undefined);
    }
  };
  return {
    record(line: Omit<ApiLogLine, 'answeredAt'>) {
      queued.push({ ...line, answeredAt: new Date() });
      writing ??= writeQueued().finally(() => {
        writing = null;
      });
    },
  };
}

export type ApiLogRecorder = ReturnType<typeof createApiLogRecorder>;

/** Logs every request under a campaign's paths (CAMPAIGN_PATH_PREFIXES) through one recorder of the process. */
export function logCampaignRequests(app: Express, sql: SqlPool): void {
  const recorder = createApiLogRecorder(sql);
  for (const prefix of CAMPAIGN_PATH_PREFIXES)
    app.use(expressPath(prefix), campaignRequestLogger(recorder, campaignParamOf(prefix)!));
}

/**
 * Logs every request an authenticated caller made against one of its workspace's campaigns, once the
 * answer is sent: method, path (without the query), status, key id, request id. Never a header, so
 * never the key. Off the request's path: a lost log line never fails or slows a request.
 */
export function campaignRequestLogger(recorder: ApiLogRecorder, param: 'id' | 'campaignId'): RequestHandler {
  return (req, res, next) => {
    const requested = req.params[param];
    // The campaign is on the request's log lines (lib/log.ts) and its span from here on.
    if (typeof requested === 'string' && isUuid(requested)) {
      (res.locals as RequestContext).campaignId = requested;
      addLogContext({ campaignId: requested });
    }
    res.once('finish', () => {
      const principal = res.locals.principal as Principal | undefined;
      const campaignId = req.params[param];
      if (!principal || typeof campaignId !== 'string' || !isUuid(campaignId)) return;
      recorder.record({
        workspaceId: principal.workspaceId,
        campaignId,
        method: req.method,
        path: req.originalUrl.split('?')[0]!,
        status: res.statusCode,
        keyId: principal.keyId,
        requestId: res.locals.requestId as string,
      });
    });
    next();
  };
}

export async function listApiLogs(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  query: { limit: number; cursor?: CursorPosition },
) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const [rows, total] = await Promise.all([
    services.db.apiLog.findMany({
      where: { campaignId: campaign.id, ...afterCursor(query.cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: query.limit + 1,
    }),
    services.db.apiLog.count({ where: { campaignId: campaign.id } }),
  ]);
  return {
    ...cursorPage(rows, query.limit, (row) => ({
      id: row.id,
      method: row.method,
      path: row.path,
      status: row.status,
      keyId: row.keyId,
      requestId: row.requestId,
      createdAt: row.createdAt.toISOString(),
    })),
    total,
  };
}

/** Deletes API logs older than the retention; every API process runs it now and then. */
export async function trimApiLogs({ sql }: Pick<AppServices, 'sql'>, retentionDays: number): Promise<number> {
  const { rowCount } = await sql.query('DELETE FROM "ApiLog" WHERE "createdAt" < now() - make_interval(days => $1)', [
    retentionDays,
  ]);
  return rowCount ?? 0;
}
