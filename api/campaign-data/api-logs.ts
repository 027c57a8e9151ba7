import type { Express, RequestHandler } from 'express';
import type { Principal } from '../door/principal';
import { cursorPage, type CursorPosition } from '../http/pagination';
import { expressPath } from '../http/route';
import { findOwnedCampaign } from '../campaigns/campaigns';
import { isUuid } from '../../lib/uuid';
import type { AppServices } from '../app-services';
import type { SqlPool } from '../../lib/sql-pool';
import { addLogContext } from '../../lib/log';
import type { RequestContext } from '../http/observe-requests';
import {
  apiLogsOfCampaignPage,
  deleteApiLogsOlderThan,
  insertApiLogLines,
  type ApiLogLine,
} from './campaign-data-store';

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
      await insertApiLogLines(sql, lines).catch(() => undefined);
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
  const { rows, total } = await apiLogsOfCampaignPage(services.db, campaign.id, query);
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
  return deleteApiLogsOlderThan(sql, retentionDays);
}
