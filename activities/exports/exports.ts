import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { Context, activityInfo, heartbeat } from '@temporalio/activity';
import { exportFileNames, exportFilePath } from '../../lib/exports/export-files';
import { createXlsxWriter, csvHead, csvLines, type ExportFormat } from '../../lib/exports/export-formats';
import {
  cursorAfter,
  readExportPage,
  type ExportCursor,
  type ExportOptions,
  type ExportRow,
} from '../../lib/exports/export-rows';
import { nextPageRows } from '../../lib/exports/export-page-size';
import type { SqlPool } from '../../lib/sql-pool';
import {
  loadExportJob,
  markExportCompleted,
  markExportExpired,
  markExportFailed,
  markExportRunning,
  setExportRowsWritten,
} from '../../lib/exports/export-job-store';
import { withExportLock } from '../../lib/exports/export-lock';
import type { BoundActivities } from '../bind-activities';

/** How far a job's rows file is written: the rows and bytes in it, and the last call it holds. */
export interface ExportCheckpoint {
  rows: number;
  bytes: number;
  cursor: ExportCursor | null;
}

export const EXPORT_START: ExportCheckpoint = { rows: 0, bytes: 0, cursor: null };

/**
 * One call of writeExportChunk works this long (plus one page) and returns, so the workflow's
 * progress query moves every few seconds and its history stays a few events per chunk.
 */
const CHUNK_BUDGET_MS = 3_000;
const PACKAGE_HEARTBEAT_ROWS = 10_000;
const MAX_ERROR_LENGTH = 500;

async function sizeOf(file: string): Promise<number> {
  return stat(file).then(
    (stats) => stats.size,
    () => 0,
  );
}

/** A positional write of the whole buffer: a write may take fewer bytes than it was given. */
async function writeAt(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  for (let offset = 0; offset < buffer.length;) {
    offset += (await handle.write(buffer, offset, buffer.length - offset, position + offset)).bytesWritten;
  }
}

function throwIfCancelled() {
  const signal = Context.current().cancellationSignal;
  if (signal.aborted) throw signal.reason;
}

/** CSV is the finished format itself; XLSX rows go to NDJSON first, since a zip cannot be appended to. */
function encoderFor(format: ExportFormat, columns: ExportOptions['columns']) {
  if (format === 'csv') return { head: csvHead(columns), lines: (rows: ExportRow[]) => csvLines(rows, columns) };
  return {
    head: Buffer.alloc(0),
    lines: (rows: ExportRow[]) =>
      Buffer.from(rows.map((row) => `${JSON.stringify(columns.map((column) => row[column]))}\n`).join('')),
  };
}

export interface ExportActivityDependencies {
  /** Plain pg, not Prisma: the export worker is kept small (worker/export-worker.ts). */
  sql: SqlPool;
  /** Where export jobs write their files (EXPORT_DIR), a volume shared with the API. */
  exportDir: string;
}

/*
 * The export job's activities, run by the export worker on its own task queue (EXPORT_TASK_QUEUE), bound in
 * worker/create-export-worker.ts.
 */
export async function beginExport(
  { sql }: Pick<ExportActivityDependencies, 'sql'>,
  { exportId }: { exportId: string },
): Promise<{ totalRows: number; format: ExportFormat }> {
  const job = await loadExportJob(sql, exportId);
  await markExportRunning(sql, exportId);
  return { totalRows: job.totalRows, format: job.format };
}

/**
 * Appends pages of rows to the job's rows file, from `from` (or from the last heartbeat of an
 * earlier attempt of this very call, which is further on), for about CHUNK_BUDGET_MS. Each page
 * is heartbeated as a checkpoint: a retry after a crash cuts the file back to the checkpoint's
 * byte offset and continues after its cursor, so no row is lost or written twice.
 */
export async function writeExportChunk(
  { sql, exportDir }: ExportActivityDependencies,
  {
    exportId,
    from,
    pageRows,
  }: {
    exportId: string;
    from: ExportCheckpoint;
    pageRows: number;
  },
): Promise<{ checkpoint: ExportCheckpoint; done: boolean }> {
  const job = await loadExportJob(sql, exportId);
  const file = exportFilePath(exportDir, exportFileNames(exportId, job.format).rows);
  const encoder = encoderFor(job.format, job.options.columns);
  const scope = { campaignId: job.campaignId, from: job.options.from, until: job.options.until };
  return withExportLock(sql, exportId, async () => {
    let checkpoint: ExportCheckpoint = (activityInfo().heartbeatDetails as ExportCheckpoint | undefined) ?? from;
    await mkdir(exportDir, { recursive: true });
    // Shorter than its checkpoint, the file lost data it had (the volume was not synced): start over.
    if ((await sizeOf(file)) < checkpoint.bytes) checkpoint = EXPORT_START;
    const handle = await open(file, checkpoint.bytes === 0 ? 'w' : 'r+');
    try {
      await handle.truncate(checkpoint.bytes);
      if (checkpoint.bytes === 0) {
        await writeAt(handle, encoder.head, 0);
        checkpoint = { ...EXPORT_START, bytes: encoder.head.length };
      }
      await setExportRowsWritten(sql, exportId, checkpoint.rows);
      const started = Date.now();
      for (let limit = pageRows; ;) {
        throwIfCancelled();
        const rows = await readExportPage(sql, scope, checkpoint.cursor, limit);
        const lastPage = rows.length < limit;
        if (rows.length) {
          const chunk = encoder.lines(rows);
          await writeAt(handle, chunk, checkpoint.bytes);
          checkpoint = {
            rows: checkpoint.rows + rows.length,
            bytes: checkpoint.bytes + chunk.length,
            cursor: cursorAfter(rows),
          };
          heartbeat(checkpoint);
          await setExportRowsWritten(sql, exportId, checkpoint.rows);
          limit = nextPageRows(pageRows, { rows: rows.length, bytes: chunk.length });
        }
        if (lastPage) {
          await handle.sync();
          return { checkpoint, done: true };
        }
        if (Date.now() - started >= CHUNK_BUDGET_MS) return { checkpoint, done: false };
      }
    } finally {
      await handle.close();
    }
  });
}

/**
 * Packages the rows file as a workbook with exceljs's streaming writer. A zip's deflate state and
 * central directory cannot be checkpointed, so a retry packages again from the start: it reads a
 * local file, which is cheap next to the database reads that the rows file already saved.
 */
export async function packageExportXlsx(
  { sql, exportDir }: ExportActivityDependencies,
  { exportId }: { exportId: string },
): Promise<void> {
  const job = await loadExportJob(sql, exportId);
  const names = exportFileNames(exportId, job.format);
  const columns = job.options.columns;
  await withExportLock(sql, exportId, async () => {
    const output = createWriteStream(exportFilePath(exportDir, names.packaging));
    const writer = await createXlsxWriter(output, columns);
    const lines = createInterface({
      input: createReadStream(exportFilePath(exportDir, names.rows)),
      crlfDelay: Infinity,
    });
    let rows = 0;
    for await (const line of lines) {
      const values = JSON.parse(line) as ExportRow[keyof ExportRow][];
      writer.add([Object.fromEntries(columns.map((column, index) => [column, values[index] ?? null])) as ExportRow]);
      if (++rows % PACKAGE_HEARTBEAT_ROWS === 0) {
        heartbeat({ rows });
        throwIfCancelled();
      }
    }
    await writer.commit();
    await finished(output);
  });
}

/** Puts the finished file in place and starts its retention; a second call changes nothing. */
export async function completeExport(
  { sql, exportDir }: ExportActivityDependencies,
  {
    exportId,
    rowsWritten,
    retentionSeconds,
  }: {
    exportId: string;
    rowsWritten: number;
    retentionSeconds: number;
  },
): Promise<{ expiresAt: string }> {
  const job = await loadExportJob(sql, exportId);
  if (job.status === 'completed' && job.expiresAt) return { expiresAt: job.expiresAt.toISOString() };
  const names = exportFileNames(exportId, job.format);
  const ready = exportFilePath(exportDir, job.format === 'csv' ? names.rows : names.packaging);
  const target = exportFilePath(exportDir, names.finished);
  await rename(ready, target).catch(async (error: NodeJS.ErrnoException) => {
    // A retry after the rename: the file is already in place.
    if (error.code !== 'ENOENT' || !(await sizeOf(target))) throw error;
  });
  if (job.format === 'xlsx') await rm(exportFilePath(exportDir, names.rows), { force: true });
  const finishedAt = new Date();
  const expiresAt = new Date(finishedAt.getTime() + retentionSeconds * 1000);
  await markExportCompleted(sql, exportId, { filePath: names.finished, rowsWritten, finishedAt, expiresAt });
  return { expiresAt: expiresAt.toISOString() };
}

export async function failExport(
  { sql, exportDir }: ExportActivityDependencies,
  { exportId, reason }: { exportId: string; reason: string },
): Promise<void> {
  const job = await loadExportJob(sql, exportId);
  const names = exportFileNames(exportId, job.format);
  await Promise.all([names.rows, names.packaging].map((name) => rm(exportFilePath(exportDir, name), { force: true })));
  await markExportFailed(sql, exportId, reason.slice(0, MAX_ERROR_LENGTH), new Date());
}

/** Retention is over: the file is deleted and the job says so. */
export async function expireExport(
  { sql, exportDir }: ExportActivityDependencies,
  { exportId }: { exportId: string },
): Promise<void> {
  const job = await loadExportJob(sql, exportId);
  await rm(exportFilePath(exportDir, exportFileNames(exportId, job.format).finished), { force: true });
  await markExportExpired(sql, exportId);
}

export type ExportActivities = BoundActivities<{
  beginExport: typeof beginExport;
  writeExportChunk: typeof writeExportChunk;
  packageExportXlsx: typeof packageExportXlsx;
  completeExport: typeof completeExport;
  failExport: typeof failExport;
  expireExport: typeof expireExport;
}>;
