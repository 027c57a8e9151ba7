import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { OrderNotificationInput } from '../commerce/order-notification';
import { startWorkflow } from './start-workflow';
import { orderNotificationWorkflowId } from './workflow-ids';

/**
 * Starts one rule's notification of one order (workflows/commerce/order-notification.ts). One already started,
 * running or finished, is left alone (REJECT_DUPLICATE); any other failure is thrown (the activity is retried).
 */
export async function startOrderNotification(
  temporal: Client,
  taskQueue: string,
  input: OrderNotificationInput,
  workspaceId: string,
): Promise<void> {
  try {
    await startWorkflow(temporal, 'orderNotificationWorkflow', {
      workflowId: orderNotificationWorkflowId(input.ruleId, input.orderId),
      taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { WorkspaceId: [workspaceId] },
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
