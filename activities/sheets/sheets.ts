import { Context, heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../../lib/error-codes';
import type { Keyring } from '../../lib/secrets/keyring';
import { openSheetConnection } from '../../lib/sheets/opened-connection';
import { GoogleSheetsError, GoogleSpreadsheetProvider } from '../../lib/sheets/google-provider';
import { DEFAULT_WRITE_PACE, sheetWriteLimiter, type WritePace } from '../../lib/sheets/quota';
import { rowRange } from '../../lib/sheets/a1';
import { SHEET_TAB, sheetCells } from '../../lib/sheets/columns';
import type { SpreadsheetProvider } from '../../lib/sheets/provider';
import { LAST_UUID, readChangesPage, readFullPage, type SheetCursor, type SheetPageRow } from '../../lib/sheets/rows';
import type { Queryable, SqlPool } from '../../lib/sql-pool';
import { withActivityLock } from '../../lib/exports/export-lock';
import {
  assignSheetRows,
  beginSheetSync,
  finishSheetSync,
  loadLiveSheet,
  markSheetSyncFailed,
  recordSheetPageWritten,
  resetLiveSheet,
  setSheetCursor,
  type LiveSheetState,
} from '../../lib/sheets/live-sheet-store';
import type { BoundActivities } from '../bind-activities';

/** One call of syncSheetChunk works this long (plus one page), as an export's chunk does. */
const CHUNK_BUDGET_MS = 3_000;

/**
 * How long a change waits before a sync takes it: a row's updatedAt is stamped when its statement runs,
 * and a transaction that commits later than one begun after it would otherwise slip behind a cursor
 * that already moved past its time. Writers' transactions last milliseconds; this leaves them seconds.
 */
export const SHEET_SETTLE_MS = 2_000;

/** Rows per page: a page's rows, their cells and the blocks they land in are what a chunk holds in memory. */
export const SHEET_PAGE_ROWS = 1_000;

export interface SheetSyncProgress {
  /** Rows written by this sync so far. */
  rowsWritten: number;
  /** Lead rows in the sheet. */
  rowCount: number;
  done: boolean;
  /** The sheet's schedule as stored now (PATCH may have changed it). */
  intervalSeconds: number;
}

export interface SheetActivityDependencies {
  sql: SqlPool;
  provider: SpreadsheetProvider;
  /** Rows per page; default SHEET_PAGE_ROWS. */
  pageRows?: number;
  /** Default SHEET_SETTLE_MS. */
  settleMs?: number;
  /**
   * Sheets attached to a Google spreadsheet (provider google or google-twin): the key ring their connection's key is
   * sealed with (SECRETS_KEYS), the write pace per service account, the 429 backoff (default QUOTA_BACKOFF), and one
   * request's timeout (default GOOGLE_SHEETS_TIMEOUT_MS; tests shorten it).
   */
  google?: {
    keyring?: Keyring;
    pace?: WritePace;
    backoff?: { firstMs: number; maxMs: number; attempts: number };
    timeoutMs?: number;
  };
}

/** A failure no retry mends (the spreadsheet not shared, gone; the connection removed): the sync is marked failed. */
const lasting = (message: string) =>
  ApplicationFailure.create({ type: ErrorCode.sheet_sync_failed, message, nonRetryable: true });

/** Google's lasting refusals become non-retryable failures; 429 after every attempt and 5xx are retried by Temporal. */
async function asActivityFailure<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GoogleSheetsError && !error.retryable) throw lasting(error.message);
    throw error;
  }
}

function throwIfCancelled() {
  const signal = Context.current().cancellationSignal;
  if (signal.aborted) throw signal.reason;
}

/*
 * The live sheet's activities, run by the export worker (EXPORT_TASK_QUEUE) beside the export job's:
 * both page through a campaign with plain pg and write files, with bounded memory. Bound in
 * worker/create-export-worker.ts.
 */

/** The sheet's provider: the local one, or its Google spreadsheet through its connection (opened afresh). */
async function providerOf(
  { sql, provider: local, google }: SheetActivityDependencies,
  sheet: Pick<LiveSheetState, 'provider' | 'connectionId'>,
): Promise<SpreadsheetProvider> {
  if (sheet.provider === 'local') return local;
  if (!google?.keyring)
    throw lasting('SECRETS_KEYS is not set on the export worker: a Google sheet connection cannot be opened');
  const connection = sheet.connectionId ? await openSheetConnection(sql, google.keyring, sheet.connectionId) : null;
  if (!connection) throw lasting(`the sheet's Google connection ${sheet.connectionId} is removed; attach another`);
  return new GoogleSpreadsheetProvider({
    name: connection.provider,
    key: connection.key,
    rootUrl: connection.rootUrl,
    limiter: sheetWriteLimiter(sql, google.pace ?? DEFAULT_WRITE_PACE),
    backoff: google.backoff,
    // Waiting for the account's turn or after a 429 is progress: the heartbeat timeout is 20 s.
    onWait: () => heartbeat(),
    // A request that hangs fails after its timeout, or at once when Temporal cancels the attempt (a heartbeat
    // missed): the sheet's lock and its connection are given back either way (withActivityLock's ROLLBACK).
    signal: Context.current().cancellationSignal,
    ...(google.timeoutMs !== undefined && { timeoutMs: google.timeoutMs }),
  });
}
const locked = <T>(sql: SqlPool, sheetId: string, work: () => Promise<T>) =>
  withActivityLock(sql, `sheet:${sheetId}`, ErrorCode.sheet_sync_failed, work);

/** Writes one page at the rows its leads hold (assigning rows to new leads), then moves the cursor past it. */
async function writePage(
  sql: Queryable,
  provider: SpreadsheetProvider,
  sheetId: string,
  sheet: LiveSheetState,
  page: SheetPageRow[],
  cursor: SheetCursor,
) {
  const { rows, rowCount } = await assignSheetRows(
    sql,
    sheetId,
    page.map((row) => row.leadId),
  );
  await provider.batchUpdateValues(
    sheet.spreadsheetId,
    page.map((row, index) => ({
      range: rowRange(SHEET_TAB, rows[index]!, sheet.columns.length),
      values: [sheetCells(row, sheet.columns)],
    })),
  );
  // Only now, with the page in the sheet, does the cursor move: a crash before this line re-reads the
  // same page and writes it again at the same rows.
  await recordSheetPageWritten(sql, sheetId, cursor, page.length, rowCount);
  return rowCount;
}

/**
 * Advances sync `syncNumber` of the sheet for about CHUNK_BUDGET_MS: reads pages after the stored
 * cursor, writes each, and stores the cursor after it. The workflow passes nothing but the sheet and
 * the sync's number, and gets counts back: the cursor lives in PostgreSQL, never in its history.
 */
export async function syncSheetChunk(
  dependencies: SheetActivityDependencies,
  { sheetId, syncNumber }: { sheetId: string; syncNumber: number },
): Promise<SheetSyncProgress> {
  const { sql, pageRows = SHEET_PAGE_ROWS, settleMs = SHEET_SETTLE_MS } = dependencies;
  return locked(sql, sheetId, () =>
    asActivityFailure(async () => {
      await beginSheetSync(sql, sheetId, syncNumber, settleMs);
      let sheet = await loadLiveSheet(sql, sheetId);
      const provider = await providerOf(dependencies, sheet);
      if (sheet.cursor === null) {
        await provider.create({ key: sheet.spreadsheetId, title: `Campaign ${sheet.campaignId}`, tab: SHEET_TAB });
        await provider.batchUpdateValues(sheet.spreadsheetId, [
          { range: rowRange(SHEET_TAB, 1, sheet.columns.length), values: [[...sheet.columns]] },
        ]);
        const cursor: SheetCursor = { phase: 'full', afterLeadId: null, watermark: sheet.syncUntil! };
        await setSheetCursor(sql, sheetId, cursor);
        sheet = { ...sheet, cursor };
      }
      const started = Date.now();
      let cursor = sheet.cursor!;
      let rowsWritten = sheet.syncRowsWritten;
      let rowCount = sheet.rowCount;
      for (;;) {
        throwIfCancelled();
        const page =
          cursor.phase === 'full'
            ? await readFullPage(sql, sheet.campaignId, cursor.afterLeadId, pageRows)
            : await readChangesPage(sql, sheet.campaignId, cursor, sheet.syncUntil!, pageRows);
        const last = page.at(-1);
        if (last) {
          const next: SheetCursor =
            cursor.phase === 'full'
              ? { ...cursor, afterLeadId: last.leadId }
              : { phase: 'changes', changedAt: last.changedAt, leadId: last.leadId };
          rowCount = await writePage(sql, provider, sheetId, sheet, page, next);
          cursor = next;
          rowsWritten += page.length;
          heartbeat({ rowsWritten, cursor });
        }
        if (page.length < pageRows && cursor.phase === 'full') {
          // Every lead is in the sheet as of the watermark; changes after it come next.
          cursor = { phase: 'changes', changedAt: cursor.watermark, leadId: LAST_UUID };
          await setSheetCursor(sql, sheetId, cursor);
          continue;
        }
        if (page.length < pageRows) {
          const publish = rowsWritten > 0 || sheet.publishedAt === null;
          if (publish) await provider.flush(sheet.spreadsheetId);
          await finishSheetSync(sql, sheetId, publish);
          const finished = await loadLiveSheet(sql, sheetId);
          return { rowsWritten, rowCount, done: true, intervalSeconds: finished.intervalSeconds };
        }
        if (Date.now() - started >= CHUNK_BUDGET_MS)
          return { rowsWritten, rowCount, done: false, intervalSeconds: sheet.intervalSeconds };
      }
    }),
  );
}

/** A rebuild: the spreadsheet emptied and the positions forgotten; the next sync writes it from scratch. */
export async function resetSheet(
  dependencies: SheetActivityDependencies,
  { sheetId }: { sheetId: string },
): Promise<void> {
  const { sql } = dependencies;
  await locked(sql, sheetId, () =>
    asActivityFailure(async () => {
      const sheet = await loadLiveSheet(sql, sheetId);
      const provider = await providerOf(dependencies, sheet);
      await resetLiveSheet(sql, sheetId);
      await provider.create({ key: sheet.spreadsheetId, title: `Campaign ${sheet.campaignId}`, tab: SHEET_TAB });
      await provider.clearValues(sheet.spreadsheetId, `${SHEET_TAB}!A1:ZZ`);
    }),
  );
}

export async function failSheetSync(
  { sql }: Pick<SheetActivityDependencies, 'sql'>,
  { sheetId, reason }: { sheetId: string; reason: string },
): Promise<void> {
  await markSheetSyncFailed(sql, sheetId, reason.slice(0, 500));
}

/** The sheet was deleted: its spreadsheet goes too, once no chunk is writing to it. */
export async function removeSheetFiles(
  { sql, provider: local }: Pick<SheetActivityDependencies, 'sql' | 'provider'>,
  { sheetId, spreadsheetId }: { sheetId: string; spreadsheetId: string },
): Promise<void> {
  // The local files, if any (a sheet attached to Google once was local under this id); a Google spreadsheet is the
  // customer's and is left as it is.
  await locked(sql, sheetId, () => local.delete(spreadsheetId));
}

export type SheetActivities = BoundActivities<{
  syncSheetChunk: typeof syncSheetChunk;
  resetSheet: typeof resetSheet;
  failSheetSync: typeof failSheetSync;
  removeSheetFiles: typeof removeSheetFiles;
}>;
