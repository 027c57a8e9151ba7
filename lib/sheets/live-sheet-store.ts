import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../error-codes';
import type { SheetColumn } from './columns';
import type { SheetCursor } from './rows';
import type { Queryable } from '../sql-pool';

/**
 * The LiveSheet row and its LiveSheetRow positions as the sheet activities read and write them
 * (activities/sheets/sheets.ts), in plain SQL: the export worker loads no Prisma.
 */

/** What the sheet activities read of a LiveSheet row. */
export interface LiveSheetState {
  campaignId: string;
  /** local, google or google-twin (LiveSheet.provider). */
  provider: string;
  /** google and google-twin: the service account connection that writes. */
  connectionId: string | null;
  spreadsheetId: string;
  columns: SheetColumn[];
  intervalSeconds: number;
  cursor: SheetCursor | null;
  syncNumber: number;
  syncUntil: string | null;
  syncRowsWritten: number;
  rowCount: number;
  publishedAt: Date | null;
}

// LiveSheet's times are timestamps without time zone holding UTC (as Prisma writes them).
const NOW = `(clock_timestamp() AT TIME ZONE 'UTC')`;
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

async function updateLiveSheet(sql: Queryable, sheetId: string, assignments: string, values: unknown[] = []) {
  await sql.query(`UPDATE "LiveSheet" SET ${assignments}, "updatedAt" = ${NOW} WHERE id = $1::uuid`, [
    sheetId,
    ...values,
  ]);
}

/** The sheet, or a non-retryable sheet_not_found once it was deleted (DELETE /campaigns/{id}/sheet). */
export async function loadLiveSheet(sql: Queryable, sheetId: string): Promise<LiveSheetState> {
  const {
    rows: [sheet],
  } = await sql.query<LiveSheetState>(
    `SELECT "campaignId", provider, "connectionId"::text, "spreadsheetId", columns, "intervalSeconds", cursor, "syncNumber",
           ${iso('"syncUntil"')} AS "syncUntil", "syncRowsWritten", "rowCount", "publishedAt"
         FROM "LiveSheet" WHERE id = $1::uuid`,
    [sheetId],
  );
  if (!sheet)
    throw ApplicationFailure.create({
      type: ErrorCode.sheet_not_found,
      message: `live sheet ${sheetId} not found`,
      nonRetryable: true,
    });
  return sheet;
}

/**
 * Begins sync number `syncNumber`: its rows are those changed up to now less `settleMs`. A retry of
 * the chunk that began it finds the number already stored and changes nothing.
 */
export async function beginSheetSync(
  sql: Queryable,
  sheetId: string,
  syncNumber: number,
  settleMs: number,
): Promise<void> {
  await sql.query(
    `UPDATE "LiveSheet" SET "syncNumber" = $2, "syncRowsWritten" = 0, "syncStartedAt" = ${NOW},
           "syncUntil" = ${NOW} - $3 * interval '1 millisecond',
           status = CASE WHEN cursor IS NULL OR cursor ->> 'phase' = 'full' THEN 'rebuilding' ELSE 'syncing' END,
           error = NULL, "updatedAt" = ${NOW}
         WHERE id = $1::uuid AND "syncNumber" <> $2`,
    [sheetId, syncNumber, settleMs],
  );
}

export const setSheetCursor = (sql: Queryable, sheetId: string, cursor: SheetCursor) =>
  updateLiveSheet(sql, sheetId, 'cursor = $2::jsonb', [JSON.stringify(cursor)]);

/**
 * The page is in the sheet: the cursor moves past it and its rows are counted, in one statement, so
 * that a crash leaves either both or neither.
 */
export const recordSheetPageWritten = (
  sql: Queryable,
  sheetId: string,
  cursor: SheetCursor,
  rowsWritten: number,
  rowCount: number,
) =>
  updateLiveSheet(
    sql,
    sheetId,
    `cursor = $2::jsonb, "syncRowsWritten" = "syncRowsWritten" + $3, "rowsWrittenTotal" = "rowsWrittenTotal" + $3, "rowCount" = $4`,
    [JSON.stringify(cursor), rowsWritten, rowCount],
  );

export const finishSheetSync = (sql: Queryable, sheetId: string, published: boolean) =>
  updateLiveSheet(
    sql,
    sheetId,
    `status = 'idle', "lastSyncAt" = ${NOW}, "lastSyncRowsWritten" = "syncRowsWritten", "syncStartedAt" = NULL` +
      (published ? `, "publishedAt" = ${NOW}` : ''),
  );

export const markSheetSyncFailed = (sql: Queryable, sheetId: string, error: string) =>
  updateLiveSheet(sql, sheetId, `status = 'failed', "syncStartedAt" = NULL, error = $2`, [error]);

/** A rebuild: no cursor, no positions; the next sync is a full pass that assigns rows afresh. */
export async function resetLiveSheet(sql: Queryable, sheetId: string): Promise<void> {
  await sql.query(`DELETE FROM "LiveSheetRow" WHERE "sheetId" = $1::uuid`, [sheetId]);
  await updateLiveSheet(sql, sheetId, `cursor = NULL, "rowCount" = 0, status = 'rebuilding'`);
}

/**
 * The rows of these leads, in the same order: a lead's row is kept once assigned; leads without one
 * get the next rows after the last assigned (row 1 is the header), in one statement.
 */
export async function assignSheetRows(
  sql: Queryable,
  sheetId: string,
  leadIds: string[],
): Promise<{ rows: number[]; rowCount: number }> {
  // "last": the last row assigned before this page; with the page's rows it gives the sheet's row count.
  const { rows } = await sql.query<{ leadId: string | null; row: number | null; last: number }>(
    `WITH page AS (
           SELECT id, ord FROM unnest($2::uuid[]) WITH ORDINALITY AS page(id, ord)
         ), existing AS (
           SELECT r."leadId", r.row FROM "LiveSheetRow" r WHERE r."sheetId" = $1::uuid AND r."leadId" IN (SELECT id FROM page)
         ), last AS (
           SELECT coalesce(max(row), 1) AS row FROM "LiveSheetRow" WHERE "sheetId" = $1::uuid
         ), inserted AS (
           INSERT INTO "LiveSheetRow" ("sheetId", "leadId", row)
           SELECT $1::uuid, page.id, last.row + row_number() OVER (ORDER BY page.ord)
           FROM page, last WHERE page.id NOT IN (SELECT "leadId" FROM existing)
           RETURNING "leadId", row
         ), assigned AS (
           SELECT "leadId", row FROM existing UNION ALL SELECT "leadId", row FROM inserted
         )
         SELECT assigned."leadId"::text, assigned.row, last.row AS last
           FROM last LEFT JOIN assigned ON true`,
    [sheetId, leadIds],
  );
  const byLead = new Map(rows.map((row) => [row.leadId, row.row]));
  const lastRow = Math.max(...rows.map((row) => Math.max(row.last, row.row ?? 1)));
  return { rows: leadIds.map((leadId) => byLead.get(leadId)!), rowCount: lastRow - 1 };
}
