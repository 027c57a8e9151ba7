import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { startWorkflow } from './start-workflow';
import { webhookDeliveryWorkflowId } from './workflow-ids';

/**
 * Starts the delivery of one result webhook event to one endpoint (workflows/result-webhooks/webhook-delivery.ts).
 * One already started, running or finished, is left alone (REJECT_DUPLICATE); any other failure is thrown (the
 * activity is retried).
 */
export async function startWebhookDelivery(
  temporal: Client,
  taskQueue: string,
  deliveryId: string,
  workspaceId: string,
): Promise<void> {
  try {
    await startWorkflow(temporal, 'webhookDeliveryWorkflow', {
      workflowId: webhookDeliveryWorkflowId(deliveryId),
      taskQueue,
      args: [{ deliveryId }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { WorkspaceId: [workspaceId] },
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
