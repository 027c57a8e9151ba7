import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EndedCall } from '../calls/ended-call';
import { callEndedSignal } from './messages';

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
