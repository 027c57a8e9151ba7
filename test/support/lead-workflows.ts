import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { leadWorkflowId } from '../../lib/workflow-ids';
import type { leadDialWorkflow } from '../../workflows/lead-dial';

/**
 * The handle of a pushed lead's workflow once it exists. A push answers when the lead is stored; its
 * workflow is started from the stored row a moment later, so tests wait for it here.
 */
export async function startedLeadWorkflow(
  client: Client,
  campaignId: string,
  idempotencyKey: string,
  timeoutMs = 30_000,
): Promise<WorkflowHandle<typeof leadDialWorkflow>> {
  const handle = client.workflow.getHandle<typeof leadDialWorkflow>(leadWorkflowId(campaignId, idempotencyKey));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await handle.describe();
      return handle;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** What a pushed lead's workflow returned. */
export async function leadResult(client: Client, campaignId: string, idempotencyKey: string) {
  return (await startedLeadWorkflow(client, campaignId, idempotencyKey)).result();
}
