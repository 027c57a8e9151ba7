import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { ExportJobInput } from '../exports/export-jobs';
import { startWorkflow } from './start-workflow';
import { exportJobWorkflowId } from './workflow-ids';

/** A healthy start takes milliseconds; one that hangs is answered 503 rather than held. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

/**
 * Starts an export job's workflow (workflows/exports/export-job.ts) for its stored ExportJob row. Any failure,
 * a second start of the same job included, is thrown: the caller withdraws the job (POST /campaigns/{id}/exports).
 */
export async function startExportJob(
  temporal: Client,
  taskQueue: string,
  input: ExportJobInput,
  owner: { campaignId: string; workspaceId: string },
): Promise<void> {
  await temporal.connection.withDeadline(Date.now() + WORKFLOW_START_DEADLINE_MS, () =>
    startWorkflow(temporal, 'exportJobWorkflow', {
      workflowId: exportJobWorkflowId(input.exportId),
      taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { CampaignId: [owner.campaignId], WorkspaceId: [owner.workspaceId] },
    }),
  );
}
