import path from 'node:path';
import type { ExportFormat } from './export-formats';

/**
 * The files of one export job on the export volume. The job's row stores the finished file's name,
 * relative to EXPORT_DIR, so the API and the workers may mount the volume at different paths.
 */
export function exportFileNames(exportId: string, format: ExportFormat) {
  return {
    /** Appended page by page; cut back to the last checkpoint when an attempt resumes. */
    rows: format === 'csv' ? `${exportId}.csv.part` : `${exportId}.rows.ndjson`,
    /** The workbook while it is packaged from the rows (XLSX only). */
    packaging: `${exportId}.xlsx.part`,
    /** The finished file, renamed into place in one step. */
    finished: `${exportId}.${format}`,
  };
}

export function exportFilePath(exportDir: string, name: string): string {
  return path.join(exportDir, path.basename(name));
}

/** What a download is called: campaign and time of the request, ASCII only. */
export function exportDownloadName(campaignId: string, createdAt: Date, format: ExportFormat): string {
  const stamp = createdAt
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `calls-${campaignId}-${stamp}.${format}`;
}
