/**
 * How many rows the next page of an export job reads. A page's rows live from their arrival until they
 * are written: a page that outgrows V8's young generation survives its scavenges and is promoted, and
 * the old space then fills with dead pages until a full collection. Measured with bench/exports.ts'
 * rows (about 240 bytes of CSV each), the export worker's peak RSS was 316 MB with 5,000-row pages,
 * 265 MB with 2,000 and 176 MB with 1,000 (idle: 160 MB); with 1 KB of lead fields per row, 1,000-row
 * pages reached 243 MB and 500-row pages 175 MB. Rows are as wide as their lead's fields, so pages are
 * sized by the bytes they encode to, never more than the job's `maxRows`.
 */
export const EXPORT_PAGE_BYTES = 256 * 1024;

/** The rows of the next page, from the bytes per row of the last one. */
export function nextPageRows(maxRows: number, lastPage: { rows: number; bytes: number }): number {
  if (lastPage.rows === 0) return maxRows;
  const bytesPerRow = Math.max(1, lastPage.bytes / lastPage.rows);
  return Math.max(1, Math.min(maxRows, Math.floor(EXPORT_PAGE_BYTES / bytesPerRow)));
}
