import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EndedCall } from '../calls/ended-call';
import { callEndedSignal } from './messages';
import { startWorkflowOnce } from './start-workflow';
import { inboundCallWorkflowId } from './workflow-ids';

/**
 * Tells the call's workflow (the dial ladder, a journey's call node, a test call) that it ended, once the
 * call's event was applied (applyCallEvent, lib/calls/call-end.ts). Sent again for every duplicate of the
 * terminal event, so an API that died between the commit and the signal is healed by the carrier's retry; a
 * workflow that has already finished needs nothing.
 */
export async function signalCallEnded(temporal: Client, workflowId: string, ended: EndedCall): Promise<void> {
  try {
    await temporal.workflow.getHandle(workflowId).signal(callEndedSignal, ended);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}

/**
 * Starts the workflow that watches an inbound call until it ends (workflows/calls/inbound-call.ts): its end event
 * signals it (the call records its id, inboundCallWorkflowId), and past the deadline it asks the carrier, so that a
 * lost end callback still ends the call. Already started (the carrier asked again for the same call) is fine.
 */
export async function startInboundCallWorkflow(
  temporal: Client,
  taskQueue: string,
  call: { attemptId: string; workspaceId: string },
): Promise<void> {
  await startWorkflowOnce(temporal, 'inboundCallWorkflow', {
    workflowId: inboundCallWorkflowId(call.attemptId),
    taskQueue,
    workspaceId: call.workspaceId,
    args: [{ attemptId: call.attemptId }],
  });
}
