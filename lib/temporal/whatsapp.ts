import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { whatsAppMessageStatusSignal } from './messages';
import { startWorkflowOnce } from './start-workflow';
import { whatsAppMessageWorkflowId } from './workflow-ids';

/**
 * Starts the workflow that hands one recorded outbound message to the provider (workflows/whatsapp/whatsapp-message.ts),
 * at most once: a message whose workflow was already started is fine. Any other failure is thrown (the caller
 * withdraws the message).
 */
export async function startWhatsAppMessage(
  temporal: Client,
  taskQueue: string,
  message: { id: string; workspaceId: string },
): Promise<void> {
  await startWorkflowOnce(temporal, 'whatsAppMessageWorkflow', {
    workflowId: whatsAppMessageWorkflowId(message.id),
    taskQueue,
    workspaceId: message.workspaceId,
    args: [{ messageId: message.id }],
  });
}

/** The webhook does not wait longer for Temporal: the lead reads the status itself when its wait ends. */
const LEAD_SIGNAL_DEADLINE_MS = 2_000;

/**
 * Tells a WHATSAPP campaign's lead (workflows/whatsapp/lead-message.ts) the status its message stands at,
 * duplicates included (harmless). A lead that has ended needs nothing; any other failure is thrown.
 */
export async function signalWhatsAppMessageStatus(
  temporal: Client,
  workflowId: string,
  status: { messageId: string; status: string },
): Promise<void> {
  try {
    await temporal.connection.withDeadline(Date.now() + LEAD_SIGNAL_DEADLINE_MS, () =>
      temporal.workflow.getHandle(workflowId).signal(whatsAppMessageStatusSignal, status),
    );
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
