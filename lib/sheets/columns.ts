import type { ExportCell } from '../exports/export-rows';

/**
 * The columns of a live sheet, in their default order: one row per lead of the campaign, with its
 * latest call (the one started last) and that call's intelligence. `leadFields` is the JSON the lead
 * was pushed with; `evaluationScore` (0-100) and `extractedFields` (the agent's extraction fields as
 * filled from the transcript, { name: value } as JSON) are the call intelligence, as in exports;
 * `updatedAt` is when the row last changed (the lead or one of its calls).
 */
export const SHEET_COLUMNS = [
  'leadId',
  'phone',
  'leadName',
  'leadStatus',
  'leadFields',
  'calls',
  'lastCallId',
  'lastCallStatus',
  'outcome',
  'durationMs',
  'lastCallStartedAt',
  'lastCallEndedAt',
  'evaluationScore',
  'extractedFields',
  'updatedAt',
] as const;

export type SheetColumn = (typeof SHEET_COLUMNS)[number];
export type SheetRow = Record<SheetColumn, ExportCell>;

/** The tab the rows are written to; A1 ranges name it ("Leads!A2:O2"). */
export const SHEET_TAB = 'Leads';

/** Scheduled syncs: every SHEET_DEFAULT_INTERVAL_SECONDS unless the sheet says otherwise, within these bounds. */
export const SHEET_INTERVAL_BOUNDS = { min: 5, max: 86_400 } as const;
export const SHEET_DEFAULT_INTERVAL_SECONDS = 300;

/** A row's cells in the sheet's column order. */
export const sheetCells = (row: SheetRow, columns: readonly SheetColumn[]): ExportCell[] =>
  columns.map((column) => row[column]);
