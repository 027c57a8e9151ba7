import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../error-codes';
import type { ExportFormat } from './export-formats';
import type { ExportOptions } from './export-rows';
import type { Queryable } from '../sql-pool';

/**
 * The ExportJob row as the export job's activities read and write it (activities/exports/exports.ts), in plain SQL:
 * the export worker loads no Prisma.
 */

/** What the export activities read of an ExportJob row. */
export interface ExportJobRow {
  campaignId: string;
  format: ExportFormat;
  /** The request as accepted (ExportJob.options, jsonb). */
  options: ExportOptions;
  status: string;
  totalRows: number;
  /** Set once the job completed. */
  expiresAt: Date | null;
}

// ExportJob's times are timestamps without time zone holding UTC (as Prisma writes them), so they are
// read and written explicitly in UTC, whatever the worker process's time zone.
const utc = (parameter: string) => `(${parameter}::timestamptz AT TIME ZONE 'UTC')`;

async function updateExportJob(sql: Queryable, exportId: string, assignments: string, values: unknown[]) {
  await sql.query(`UPDATE "ExportJob" SET ${assignments} WHERE id = $1::uuid`, [exportId, ...values]);
}

/** The job, or a non-retryable export_not_found. */
export async function loadExportJob(sql: Queryable, exportId: string): Promise<ExportJobRow> {
  const {
    rows: [job],
  } = await sql.query<ExportJobRow>(
    `SELECT "campaignId", format, options, status, "totalRows", "expiresAt" AT TIME ZONE 'UTC' AS "expiresAt"
     FROM "ExportJob" WHERE id = $1::uuid`,
    [exportId],
  );
  if (!job)
    throw ApplicationFailure.create({
      type: ErrorCode.export_not_found,
      message: `export ${exportId} not found`,
      nonRetryable: true,
    });
  return job;
}

/** Only a queued job becomes running: a retry of a job already further on leaves it alone. */
export async function markExportRunning(sql: Queryable, exportId: string): Promise<void> {
  await sql.query(`UPDATE "ExportJob" SET status = 'running' WHERE id = $1::uuid AND status = 'queued'`, [exportId]);
}

export const setExportRowsWritten = (sql: Queryable, exportId: string, rowsWritten: number) =>
  updateExportJob(sql, exportId, '"rowsWritten" = $2', [rowsWritten]);

/** totalRows was counted when the job was created; what the file holds is the final word. */
export const markExportCompleted = (
  sql: Queryable,
  exportId: string,
  done: { filePath: string; rowsWritten: number; finishedAt: Date; expiresAt: Date },
) =>
  updateExportJob(
    sql,
    exportId,
    `status = 'completed', "filePath" = $2, "rowsWritten" = $3, "totalRows" = $3, "finishedAt" = ${utc('$4')}, "expiresAt" = ${utc('$5')}`,
    [done.filePath, done.rowsWritten, done.finishedAt.toISOString(), done.expiresAt.toISOString()],
  );

export const markExportFailed = (sql: Queryable, exportId: string, error: string, finishedAt: Date) =>
  updateExportJob(sql, exportId, `status = 'failed', error = $2, "finishedAt" = ${utc('$3')}`, [
    error,
    finishedAt.toISOString(),
  ]);

export const markExportExpired = (sql: Queryable, exportId: string) =>
  updateExportJob(sql, exportId, `status = 'expired', "filePath" = NULL`, []);
