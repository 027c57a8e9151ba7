import { ActivityFailure, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { ExportActivities, ExportCheckpoint } from '../../activities/exports/exports';
import { percentOf, type ExportJobInput, type ExportProgress, type ExportStatus } from '../../lib/exports/export-jobs';
import { exportProgressQuery } from '../../lib/temporal/messages';
import { resumableExportChunk, untilDatabaseAnswers, workbookPackaged } from '../../lib/temporal/retry-policies';

/**
 * The export activities, on the export workers' task queue. A job started before there were export
 * workers has none in its input: `taskQueue` undefined is the workflow's own queue.
 */
function exportActivities(taskQueue: string | undefined) {
  /**
   * Each chunk works about 3 s and heartbeats every page: a worker that dies is noticed within 20 s,
   * and the retry resumes from the last page it heartbeated.
   */
  const { writeExportChunk } = proxyActivities<ExportActivities>({
    taskQueue,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '20 seconds',
    retry: resumableExportChunk,
  });
  /** Packaging a workbook reads only the local rows file; a million rows take about a minute. */
  const { packageExportXlsx } = proxyActivities<ExportActivities>({
    taskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: workbookPackaged,
  });
  const { beginExport, completeExport, failExport, expireExport } = proxyActivities<ExportActivities>({
    taskQueue,
    startToCloseTimeout: '1 minute',
    retry: untilDatabaseAnswers,
  });
  return { beginExport, writeExportChunk, packageExportXlsx, completeExport, failExport, expireExport };
}

/**
 * An export job: streams the campaign's calls to a file in chunks of pages, each chunk an activity
 * that resumes from its last heartbeat after a crash; packages the workbook for XLSX; then keeps the
 * file for its retention on a durable timer and deletes it. The ExportJob row mirrors every step,
 * so the status endpoint reads PostgreSQL; `exportProgress` answers from the workflow itself.
 */
export async function exportJobWorkflow({
  exportId,
  pageRows,
  retentionSeconds,
  activityTaskQueue,
}: ExportJobInput): Promise<ExportStatus> {
  const { beginExport, writeExportChunk, packageExportXlsx, completeExport, failExport, expireExport } =
    exportActivities(activityTaskQueue);
  const progress: ExportProgress = { rowsWritten: 0, totalRows: 0, percent: 0, status: 'queued' };
  setHandler(exportProgressQuery, () => progress);

  let expiresAt: string;
  try {
    const { totalRows, format } = await beginExport({ exportId });
    progress.totalRows = totalRows;
    progress.status = 'running';
    let checkpoint: ExportCheckpoint = { rows: 0, bytes: 0, cursor: null };
    for (let done = false; !done;) {
      ({ checkpoint, done } = await writeExportChunk({ exportId, from: checkpoint, pageRows }));
      progress.rowsWritten = checkpoint.rows;
      progress.percent = percentOf(checkpoint.rows, progress.totalRows, false);
    }
    if (format === 'xlsx') await packageExportXlsx({ exportId });
    ({ expiresAt } = await completeExport({ exportId, rowsWritten: checkpoint.rows, retentionSeconds }));
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await failExport({ exportId, reason: error.cause?.message ?? error.message });
    progress.status = 'failed';
    return progress.status;
  }
  Object.assign(progress, { totalRows: progress.rowsWritten, percent: 100, status: 'completed' });

  await sleep(Math.max(1, Date.parse(expiresAt) - Date.now()));
  await expireExport({ exportId });
  progress.status = 'expired';
  return progress.status;
}
