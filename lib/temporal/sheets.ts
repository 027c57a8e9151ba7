import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { LiveSheetInput } from '../sheets/progress';
import { sheetRebuildSignal, sheetSyncSignal } from './messages';
import { signalWithStartWorkflow, startWorkflow } from './start-workflow';
import { liveSheetWorkflowId } from './workflow-ids';

/** A healthy start or signal takes milliseconds; one that hangs is answered 503 rather than held. */
const TEMPORAL_DEADLINE_MS = 5_000;

const withDeadline = <T>(temporal: Client, work: () => Promise<T>) =>
  temporal.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, work);

/** The campaign and workspace a sheet's workflow is found by in the Temporal UI (search attributes). */
export interface LiveSheetOwner {
  campaignId: string;
  workspaceId: string;
}

/**
 * Starts a new sheet's workflow (workflows/sheets/live-sheet.ts), which syncs it at once. Any failure is thrown:
 * the caller withdraws the sheet (POST /campaigns/{id}/sheet).
 */
export async function startLiveSheet(
  temporal: Client,
  taskQueue: string,
  input: LiveSheetInput,
  owner: LiveSheetOwner,
): Promise<void> {
  await withDeadline(temporal, () =>
    startWorkflow(temporal, 'liveSheetWorkflow', {
      workflowId: liveSheetWorkflowId(input.sheetId),
      taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { CampaignId: [owner.campaignId], WorkspaceId: [owner.workspaceId] },
    }),
  );
}

/**
 * Signals the sheet's workflow to sync or to rebuild, starting it again should it have ended: a signal with
 * start, so that an accepted sync or rebuild always has a workflow to run it.
 */
export async function signalLiveSheet(
  temporal: Client,
  taskQueue: string,
  input: LiveSheetInput,
  owner: LiveSheetOwner,
  signal: 'sync' | 'rebuild',
): Promise<void> {
  await withDeadline(temporal, () =>
    signalWithStartWorkflow(temporal, 'liveSheetWorkflow', {
      workflowId: liveSheetWorkflowId(input.sheetId),
      taskQueue,
      args: [{ ...input, pending: { sync: false, rebuild: false } }],
      signal: signal === 'sync' ? sheetSyncSignal : sheetRebuildSignal,
      signalArgs: [],
      searchAttributes: { CampaignId: [owner.campaignId], WorkspaceId: [owner.workspaceId] },
    }),
  );
}

/** Cancels the sheet's workflow, which then deletes the spreadsheet's files. Failures are thrown. */
export async function cancelLiveSheet(temporal: Client, sheetId: string): Promise<void> {
  await withDeadline(temporal, () => temporal.workflow.getHandle(liveSheetWorkflowId(sheetId)).cancel());
}
