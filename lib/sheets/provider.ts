import type { Writable } from 'node:stream';
import type { ExportCell } from '../exports/export-rows';
import type { ExportFormat } from '../exports/export-formats';

/** One range and its values, as spreadsheets.values.batchUpdate takes them (valueInputOption RAW). */
export interface ValueRange {
  /** A1 notation with the tab: "Leads!A2:O2". */
  range: string;
  /** Rows of cells; null is an empty cell. */
  values: ExportCell[][];
}

/**
 * Where a live sheet's rows are written, shaped like the Google Sheets API v4 so that a provider for it
 * is a thin client: `batchUpdateValues` is spreadsheets.values.batchUpdate, `appendValues`
 * spreadsheets.values.append, `clearValues` spreadsheets.values.clear, `create` spreadsheets.create,
 * `delete` Drive's files.delete and `download` Drive's files.export. Every call is asynchronous, as
 * the real one is. Two exist: `local` (lib/sheets/local-provider.ts, files on this machine) and `google`
 * (lib/sheets/google-provider.ts, a customer's Google spreadsheet through @googleapis/sheets, also `google-twin`
 * against the local twin); activities/sheets/sheets.ts picks a sheet's by its LiveSheet.provider.
 *
 * The sync writes only through batchUpdateValues, at rows it assigned and stored: writing the same
 * page twice overwrites the same cells. appendValues (values.append) is part of the shape, but is not
 * idempotent (a retried append adds the rows again), so the sync never uses it.
 */
export interface SpreadsheetProvider {
  /** Stored on the sheet (LiveSheet.provider) and shown by the API. */
  readonly name: string;
  /**
   * Makes the spreadsheet ready with its tab; again changes nothing. Returns its id. local: creates it under `key`;
   * google: `key` is the id Google assigned (attached), checked reachable, the tab added if missing.
   */
  create(request: { key: string; title: string; tab: string }): Promise<{ spreadsheetId: string }>;
  batchUpdateValues(spreadsheetId: string, data: ValueRange[]): Promise<{ totalUpdatedRows: number }>;
  appendValues(spreadsheetId: string, range: string, values: ExportCell[][]): Promise<{ updatedRange: string }>;
  /** Empties every cell of the range ("Leads!A1:ZZ" for the whole tab). */
  clearValues(spreadsheetId: string, range: string): Promise<void>;
  /** Makes the writes so far visible to readers: the local provider publishes its CSV and XLSX files. */
  flush(spreadsheetId: string): Promise<void>;
  /** Writes the spreadsheet as a file, or answers null when there is none yet. */
  download(spreadsheetId: string, format: ExportFormat): Promise<SpreadsheetFile | null>;
  delete(spreadsheetId: string): Promise<void>;
}

export interface SpreadsheetFile {
  size: number;
  write(output: Writable): Promise<void>;
}
