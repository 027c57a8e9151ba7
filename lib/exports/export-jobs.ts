/** queued (no worker has taken it yet), running, completed (downloadable), failed, expired (file deleted). */
export type ExportStatus = 'queued' | 'running' | 'completed' | 'failed' | 'expired';

/** What exportJobWorkflow (workflows/exports/export-job.ts) is started with; it answers the job's ExportStatus. */
export interface ExportJobInput {
  exportId: string;
  /** Rows per keyset page read from PostgreSQL. */
  pageRows: number;
  /** How long the finished file can be downloaded. */
  retentionSeconds: number;
  /**
   * The export workers' task queue (EXPORT_TASK_QUEUE), where the activities run. Absent from jobs
   * started before there were export workers: their activities stay on the workflow's own queue.
   */
  activityTaskQueue?: string;
}

export interface ExportProgress {
  rowsWritten: number;
  totalRows: number;
  percent: number;
  status: ExportStatus;
}

/** Whole percent, and 100 only once the file is complete: rows written may reach the count before the workbook is packaged. */
export function percentOf(rowsWritten: number, totalRows: number, completed: boolean): number {
  if (completed) return 100;
  if (totalRows <= 0) return 0;
  return Math.min(99, Math.floor((rowsWritten * 100) / totalRows));
}
