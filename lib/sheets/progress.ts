/*
 * What liveSheetWorkflow (workflows/sheets/live-sheet.ts), a campaign's live sheet, is started with and what its
 * liveSheetProgress query tells: types only, so that whoever starts, signals or queries it (lib/temporal/)
 * loads no workflow code.
 */

/** What liveSheetProgress answers. */
export interface LiveSheetProgress {
  state: 'waiting' | 'syncing' | 'rebuilding' | 'removed';
  /** The sync in progress or the last one. */
  syncNumber: number;
  rowsWritten: number;
  rowCount: number;
}

export interface LiveSheetInput {
  sheetId: string;
  /** The provider's id of the spreadsheet, to delete it once the sheet's row is gone. */
  spreadsheetId: string;
  /** EXPORT_TASK_QUEUE, where the activities run. */
  activityTaskQueue?: string;
  /** Seconds between scheduled syncs as the sheet was created; each chunk answers the current value. */
  intervalSeconds: number;
  /** Carried over continueAsNew: the last sync's number, and what was asked and not yet done. */
  syncNumber?: number;
  pending?: { sync: boolean; rebuild: boolean };
}
