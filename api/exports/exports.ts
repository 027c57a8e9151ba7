import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ExportJob } from '../../generated/prisma/client';
import { defaultExportTaskQueue } from '../../lib/config';
import { ErrorCode } from '../../lib/error-codes';
import { exportDownloadName, exportFilePath } from '../../lib/exports/export-files';
import {
  createXlsxWriter,
  csvHead,
  csvLines,
  EXPORT_CONTENT_TYPES,
  type ExportFormat,
} from '../../lib/exports/export-formats';
import { percentOf, type ExportStatus } from '../../lib/exports/export-jobs';
import {
  countExportRows,
  exportPages,
  type ExportColumn,
  type ExportOptions,
  type ExportScope,
} from '../../lib/exports/export-rows';
import { startExportJob } from '../../lib/temporal/exports';
import type { Principal } from '../door/principal';
import { Refusal, forbidden } from '../../lib/refusal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import { isUuid } from '../../lib/uuid';
import type { AppServices } from '../app-services';
import { deleteUnstartedExportJob, exportJobOfCampaign, insertExportJob } from './export-store';

/**
 * The most rows per keyset page, inline and in jobs; a job's pages shrink further for wide rows
 * (lib/exports/export-page-size.ts). Larger pages outlive V8's young generation and pile up in the old space.
 */
export const EXPORT_PAGE_ROWS = 1_000;

export interface ExportRequest {
  format: ExportFormat;
  columns: ExportColumn[];
  from?: string;
  to?: string;
}

/** A file to send: its type, the name it is saved under, and how to write it. */
export interface ExportFile {
  contentType: string;
  fileName: string;
  write(output: Writable): Promise<void>;
}

const filePath = (campaignId: string, exportId: string) => `/campaigns/${campaignId}/exports/${exportId}/file`;

export function exportJobView(job: ExportJob, now = new Date()) {
  // Past its retention the file is gone, or about to be: the timer that deletes it may fire a moment later.
  const expired =
    job.status === 'expired' || (job.status === 'completed' && job.expiresAt !== null && job.expiresAt <= now);
  const status: ExportStatus = expired ? 'expired' : (job.status as ExportStatus);
  return {
    id: job.id,
    status,
    format: job.format as ExportFormat,
    rowsWritten: job.rowsWritten,
    totalRows: job.totalRows,
    percent: percentOf(job.rowsWritten, job.totalRows, job.status === 'completed' || job.status === 'expired'),
    downloadUrl: status === 'completed' ? filePath(job.campaignId, job.id) : null,
    expiresAt: job.expiresAt?.toISOString() ?? null,
    createdAt: job.createdAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
    error: job.error,
  };
}

export type ExportJobView = ReturnType<typeof exportJobView>;

function inlineFile(
  services: AppServices,
  scope: ExportScope,
  format: ExportFormat,
  columns: ExportColumn[],
  now: Date,
): ExportFile {
  const pages = () => exportPages(services.sql, scope, Math.min(EXPORT_PAGE_ROWS, services.exports.pageRows));
  return {
    contentType: EXPORT_CONTENT_TYPES[format],
    fileName: exportDownloadName(scope.campaignId, now, format),
    async write(output) {
      if (format === 'csv') {
        await pipeline(
          Readable.from(
            (async function* () {
              yield csvHead(columns);
              for await (const rows of pages()) yield csvLines(rows, columns);
            })(),
          ),
          output,
        );
        return;
      }
      const writer = await createXlsxWriter(output, columns);
      for await (const rows of pages()) writer.add(rows);
      await writer.commit();
    },
  };
}

/**
 * Counts the calls the request covers: up to the inline threshold the file is the answer; above it
 * an ExportJob row and its workflow are created. Calls started after the request are left out (the
 * window ends at `to` or now, whichever is earlier), so the count and the file agree.
 */
export async function createExport(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  request: ExportRequest,
): Promise<{ file: ExportFile } | { job: ExportJobView }> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const now = new Date();
  const to = request.to ? new Date(request.to) : now;
  const options: ExportOptions = {
    columns: request.columns,
    from: request.from ? new Date(request.from).toISOString() : null,
    until: (to < now ? to : now).toISOString(),
  };
  const scope: ExportScope = { campaignId: campaign.id, from: options.from, until: options.until };
  const totalRows = await countExportRows(services.sql, scope);
  if (totalRows <= services.exports.inlineMaxRows)
    return { file: inlineFile(services, scope, request.format, request.columns, now) };

  const job = await insertExportJob(services.db, {
    id: randomUUID(),
    workspaceId: principal.workspaceId,
    campaignId: campaign.id,
    format: request.format,
    options: { ...options },
    totalRows,
  });
  try {
    await startExportJob(
      services.temporal,
      services.taskQueue,
      {
        exportId: job.id,
        pageRows: services.exports.pageRows,
        retentionSeconds: services.exports.retentionSeconds,
        activityTaskQueue: services.exports.taskQueue ?? defaultExportTaskQueue(services.taskQueue),
      },
      { campaignId: campaign.id, workspaceId: principal.workspaceId },
    );
  } catch (error) {
    // No workflow, no job: the caller is told to try again (503) and finds no orphan in the list.
    await deleteUnstartedExportJob(services.db, job.id);
    throw error;
  }
  return { job: exportJobView(job) };
}

async function findOwnedJob(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  exportId: string,
): Promise<ExportJob> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const job = isUuid(exportId) ? await exportJobOfCampaign(services.db, campaign.id, exportId) : null;
  if (!job) throw forbidden();
  return job;
}

export async function findExportJob(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  exportId: string,
): Promise<ExportJobView> {
  return exportJobView(await findOwnedJob(services, principal, campaignId, exportId));
}

/** The finished file, streamed from the export volume; refused while it is written, once failed, and after retention. */
export async function exportJobFile(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  exportId: string,
): Promise<ExportFile & { size: number }> {
  const stored = await findOwnedJob(services, principal, campaignId, exportId);
  const job = exportJobView(stored);
  if (job.status === 'queued' || job.status === 'running') {
    throw new Refusal(ErrorCode.export_not_ready, { status: job.status, percent: job.percent });
  }
  if (job.status === 'failed') throw new Refusal(ErrorCode.export_failed, { reason: job.error });
  const path = stored.filePath ? exportFilePath(services.exports.dir, stored.filePath) : null;
  // A file missing from the volume is as gone as an expired one.
  const size =
    path && job.status === 'completed'
      ? await stat(path).then(
          (stats) => stats.size,
          () => null,
        )
      : null;
  if (path === null || size === null) throw new Refusal(ErrorCode.export_expired, { expiresAt: job.expiresAt });
  return {
    contentType: EXPORT_CONTENT_TYPES[job.format],
    fileName: exportDownloadName(campaignId, stored.createdAt, job.format),
    size,
    write: (output) => pipeline(createReadStream(path), output),
  };
}
