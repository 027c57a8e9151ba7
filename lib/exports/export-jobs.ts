/** queued (no worker has taken it yet), running, completed (downloadable), failed, expired (file deleted). */
export type ExportStatus = 'queued' | 'running' | 'completed' | 'failed' | 'expired';

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
