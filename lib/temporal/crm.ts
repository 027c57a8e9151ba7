import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { startWorkflow } from './start-workflow';
import { crmDeliveryWorkflowId, crmImportWorkflowId } from './workflow-ids';

/** How long the receiver waits for Temporal to take a delivery's workflow before answering anyway. */
export const CRM_DELIVERY_START_DEADLINE_MS = 2_000;

/** An import's start (an API request waits on it): a healthy one takes milliseconds, one that hangs is answered 503. */
const CRM_IMPORT_START_DEADLINE_MS = 5_000;

/**
 * Starts the durable processing of a stored delivery (workflows/crm/crm-delivery.ts). Idempotent: while its
 * workflow runs (or after it completed) nothing more is started; a failed or terminated one is started again.
 */
export async function startCrmDeliveryWorkflow(
  temporal: Client,
  taskQueue: string,
  deliveryId: string,
  deadlineMs = CRM_DELIVERY_START_DEADLINE_MS,
): Promise<void> {
  try {
    await temporal.connection.withDeadline(Date.now() + deadlineMs, () =>
      startWorkflow(temporal, 'crmDeliveryWorkflow', {
        workflowId: crmDeliveryWorkflowId(deliveryId),
        taskQueue,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        args: [{ deliveryId }],
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Starts an Admin API import's workflow for its stored CrmImport row; any failure is thrown (the caller withdraws it). */
export async function startCrmImportWorkflow(
  temporal: Client,
  taskQueue: string,
  importId: string,
  owner: { campaignId: string; workspaceId: string },
): Promise<void> {
  await temporal.connection.withDeadline(Date.now() + CRM_IMPORT_START_DEADLINE_MS, () =>
    startWorkflow(temporal, 'crmImportWorkflow', {
      workflowId: crmImportWorkflowId(importId),
      taskQueue,
      args: [{ importId }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      searchAttributes: { CampaignId: [owner.campaignId], WorkspaceId: [owner.workspaceId] },
    }),
  );
}
