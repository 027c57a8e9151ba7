import type { Queryable } from '../sql-pool';
import type { SheetRow } from './columns';

/**
 * Where a live sheet's sync stands:
 * - full: the first pass (and a rebuild's) walks every lead of the campaign in id order, after
 *   `afterLeadId`; `watermark` is the instant the pass began less the settle time, where the
 *   incremental phase takes over;
 * - changes: incremental, in (changedAt, leadId) keyset order, where changedAt is the latest
 *   updatedAt of the lead and of its calls.
 */
export type SheetCursor =
  | { phase: 'full'; afterLeadId: string | null; watermark: string }
  | { phase: 'changes'; changedAt: string; leadId: string };

/** Greater than every uuid in PostgreSQL's order: the full pass covered every lead changed at its watermark. */
export const LAST_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** A row of the sheet, with the keyset position of its lead. */
export type SheetPageRow = SheetRow & { leadId: string; changedAt: string };

const instant = (parameter: string) => `(${parameter}::timestamptz AT TIME ZONE 'UTC')`;
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Each lead's row from `keys` (a query yielding "leadId" and "changedAt" in page order): its latest call
 * (the last started), that call's intelligence, and its count of calls. Instants and JSON come out as text.
 */
const ROWS = (keys: string) => `
  SELECT l.id::text AS "leadId", l.phone, l.name AS "leadName", l.status::text AS "leadStatus", l.fields::text AS "leadFields",
    stats.calls, last.id::text AS "lastCallId", last.status AS "lastCallStatus", last.outcome, last."durationMs",
    ${iso('last."startedAt"')} AS "lastCallStartedAt", ${iso('last."endedAt"')} AS "lastCallEndedAt",
    (last.intelligence #>> '{evaluation,score}')::int AS "evaluationScore",
    (SELECT jsonb_object_agg(field.key, field.value -> 'value') FROM jsonb_each(last.intelligence -> 'extraction') field)::text
      AS "extractedFields",
    ${iso('keys."changedAt"')} AS "updatedAt", ${iso('keys."changedAt"')} AS "changedAt"
  FROM (${keys}) keys
  JOIN "Lead" l ON l.id = keys."leadId"
  CROSS JOIN LATERAL (SELECT count(*)::int AS calls FROM "Call" c WHERE c."leadId" = l.id) stats
  LEFT JOIN LATERAL (
    SELECT c.* FROM "Call" c WHERE c."leadId" = l.id ORDER BY c."startedAt" DESC, c.id DESC LIMIT 1
  ) last ON true
  ORDER BY keys.ord`;

/** When a lead's row last changed: the latest of its own updatedAt and its calls'. */
const CHANGED_AT = `greatest(l."updatedAt", (SELECT max(c."updatedAt") FROM "Call" c WHERE c."leadId" = l.id))`;

/**
 * The next page of the full pass: the campaign's leads after `afterLeadId` in id order, through the
 * index Lead(campaignId, id), so that every page costs the same however deep it starts.
 */
export async function readFullPage(
  sql: Queryable,
  campaignId: string,
  afterLeadId: string | null,
  limit: number,
): Promise<SheetPageRow[]> {
  const keys = `
    SELECT l.id AS "leadId", ${CHANGED_AT} AS "changedAt", row_number() OVER (ORDER BY l.id) AS ord
    FROM (SELECT * FROM "Lead" l WHERE l."campaignId" = $1::uuid AND ($2::uuid IS NULL OR l.id > $2::uuid)
          ORDER BY l.id LIMIT $3) l`;
  const { rows } = await sql.query<SheetPageRow>(ROWS(keys), [campaignId, afterLeadId, limit]);
  return rows;
}

/**
 * The next page of changes: the leads whose row changed after the cursor and at or before `until`, in
 * (changedAt, leadId) order. The candidates come from the indexes Lead(campaignId, updatedAt) and
 * Call(campaignId, updatedAt): only leads touched between the cursor and `until` are looked at, so a sync of
 * a quiet campaign reads next to nothing, whatever its size, and a page of a busy one does not reread what
 * changed after its sync began. That bound loses nothing: a lead whose row changed in (cursor, until] has its
 * own updatedAt or one of its calls' there, since its changedAt is the greatest of them.
 */
export async function readChangesPage(
  sql: Queryable,
  campaignId: string,
  after: { changedAt: string; leadId: string },
  until: string,
  limit: number,
): Promise<SheetPageRow[]> {
  const ordered = `
    SELECT changed."leadId", changed."changedAt", row_number() OVER (ORDER BY changed."changedAt", changed."leadId") AS ord
    FROM (
      SELECT l.id AS "leadId", ${CHANGED_AT} AS "changedAt"
      FROM "Lead" l
      WHERE l.id IN (
        SELECT id FROM "Lead" WHERE "campaignId" = $1::uuid AND "updatedAt" BETWEEN ${instant('$2')} AND ${instant('$4')}
        UNION
        SELECT "leadId" FROM "Call"
        WHERE "campaignId" = $1::uuid AND "updatedAt" BETWEEN ${instant('$2')} AND ${instant('$4')} AND "leadId" IS NOT NULL
      )
    ) changed
    WHERE (changed."changedAt", changed."leadId") > (${instant('$2')}, $3::uuid) AND changed."changedAt" <= ${instant('$4')}
    ORDER BY changed."changedAt", changed."leadId"
    LIMIT $5`;
  const { rows } = await sql.query<SheetPageRow>(ROWS(ordered), [
    campaignId,
    after.changedAt,
    after.leadId,
    until,
    limit,
  ]);
  return rows;
}
