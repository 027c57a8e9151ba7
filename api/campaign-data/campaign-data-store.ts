import type { SqlPool } from '../../lib/sql-pool';
import { afterCursor, type CursorPosition } from '../http/pagination';
import type { AppServices } from '../app-services';

/**
 * The campaign data API's SQL (docs/features/campaign-data.md), as far as it has moved here: the API logs. The KPIs,
 * facts and contacts still hold their own (issue 41, item 5).
 */

export interface ApiLogLine {
  workspaceId: string;
  campaignId: string;
  method: string;
  path: string;
  status: number;
  keyId: string;
  requestId: string;
  answeredAt: Date;
}

/**
 * The lines in one INSERT, each at its own answer time (the lines of one statement would otherwise share one time and
 * list in id order, not in the order the requests were answered). A campaign outside the line's workspace, or none,
 * gets no line.
 */
export async function insertApiLogLines(sql: SqlPool, lines: readonly ApiLogLine[]): Promise<void> {
  await sql.query({
    name: 'record_api_logs',
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
  });
}

/** A page of the campaign's API logs, newest first, one more than the limit, and their total. */
export async function apiLogsOfCampaignPage(
  db: AppServices['db'],
  campaignId: string,
  query: { limit: number; cursor?: CursorPosition },
) {
  const [rows, total] = await Promise.all([
    db.apiLog.findMany({
      where: { campaignId, ...afterCursor(query.cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: query.limit + 1,
    }),
    db.apiLog.count({ where: { campaignId } }),
  ]);
  return { rows, total };
}

/** Answers how many were deleted. */
export async function deleteApiLogsOlderThan(sql: SqlPool, retentionDays: number): Promise<number> {
  const { rowCount } = await sql.query('DELETE FROM "ApiLog" WHERE "createdAt" < now() - make_interval(days => $1)', [
    retentionDays,
  ]);
  return rowCount ?? 0;
}
