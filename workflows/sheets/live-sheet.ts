import {
  ActivityFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SheetActivities } from '../../activities/sheets/sheets';
import { ErrorCode } from '../../lib/error-codes';
import { refusalOf } from '../../lib/temporal/refusal';
import { liveSheetProgressQuery, sheetRebuildSignal, sheetSyncSignal } from '../../lib/temporal/messages';
import { resumableSheetChunk, untilDatabaseAnswers } from '../../lib/temporal/retry-policies';
import type { LiveSheetInput, LiveSheetProgress } from '../../lib/sheets/progress';

/** The sheet activities, on the export workers' task queue. */
function sheetActivities(taskQueue: string | undefined) {
  /**
   * A chunk works about 3 s and heartbeats every page: a worker that dies is noticed within 20 s and the
   * chunk is retried, from the cursor the last written page stored. Retries are spaced up to a minute
   * and stop after 30; the sync is then marked failed and tried again at the next scheduled time.
   */
  const { syncSheetChunk, resetSheet } = proxyActivities<SheetActivities>({
    taskQueue,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '20 seconds',
    retry: resumableSheetChunk,
  });
  const { failSheetSync, removeSheetFiles } = proxyActivities<SheetActivities>({
    taskQueue,
    startToCloseTimeout: '1 minute',
    retry: untilDatabaseAnswers,
  });
  return { syncSheetChunk, resetSheet, failSheetSync, removeSheetFiles };
}

/** The history of one run stays under this many events; then the workflow continues as new. */
const HISTORY_EVENTS_PER_RUN = 2_000;

const isSheetGone = (error: unknown) => refusalOf(error)?.type === ErrorCode.sheet_not_found;

/**
 * A campaign's live sheet, for its whole life: syncs it now (when created), then every
 * `intervalSeconds` and on demand (sheetSync), rewrites it from scratch on sheetRebuild, and deletes
 * its spreadsheet when cancelled (DELETE /campaigns/{id}/sheet) or when it finds its row gone. Only
 * the sheet's id, a sync number and counts pass through the history; the rows and the cursor stay in
 * the activities and PostgreSQL, so a 100,000-lead sync adds a few events per 3-second chunk.
 */
export async function liveSheetWorkflow(input: LiveSheetInput): Promise<void> {
  const { sheetId, spreadsheetId } = input;
  const { syncSheetChunk, resetSheet, failSheetSync, removeSheetFiles } = sheetActivities(input.activityTaskQueue);
  const pending = { ...(input.pending ?? { sync: true, rebuild: false }) };
  const progress: LiveSheetProgress = {
    state: 'waiting',
    syncNumber: input.syncNumber ?? 0,
    rowsWritten: 0,
    rowCount: 0,
  };
  setHandler(sheetSyncSignal, () => void (pending.sync = true));
  setHandler(sheetRebuildSignal, () => void (pending.rebuild = true));
  setHandler(liveSheetProgressQuery, () => progress);

  const remove = async () => {
    await CancellationScope.nonCancellable(() => removeSheetFiles({ sheetId, spreadsheetId }));
    progress.state = 'removed';
  };

  let intervalSeconds = input.intervalSeconds;
  try {
    for (;;) {
      // Until the schedule comes due, or a sync or a rebuild is asked for.
      if (!pending.sync && !pending.rebuild)
        await condition(() => pending.sync || pending.rebuild, Math.max(1, intervalSeconds) * 1000);
      progress.state = pending.rebuild ? 'rebuilding' : 'syncing';
      pending.sync = false;
      progress.syncNumber += 1;
      try {
        if (pending.rebuild) {
          pending.rebuild = false;
          await resetSheet({ sheetId });
        }
        for (;;) {
          const chunk = await syncSheetChunk({ sheetId, syncNumber: progress.syncNumber });
          Object.assign(progress, { rowsWritten: chunk.rowsWritten, rowCount: chunk.rowCount });
          intervalSeconds = chunk.intervalSeconds;
          // A rebuild asked for mid-sync starts at once: the rest of this sync would be thrown away.
          if (chunk.done || pending.rebuild) break;
        }
      } catch (error) {
        if (!(error instanceof ActivityFailure) || isSheetGone(error) || isCancellation(error)) throw error;
        await failSheetSync({ sheetId, reason: error.cause?.message ?? error.message });
        // Tried again at the next scheduled time, or at once if asked.
      }
      progress.state = 'waiting';
      if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_EVENTS_PER_RUN) break;
    }
  } catch (error) {
    if (isCancellation(error) || isSheetGone(error)) return remove();
    throw error;
  }
  await continueAsNew<typeof liveSheetWorkflow>({
    ...input,
    syncNumber: progress.syncNumber,
    intervalSeconds,
    pending: { ...pending },
  });
}
