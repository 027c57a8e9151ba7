import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { CallIntelligenceInput } from '../call-intelligence/call-intelligence';
import { startWorkflow } from './start-workflow';
import { callIntelligenceWorkflowId } from './workflow-ids';

/** A healthy start takes milliseconds; one that hangs longer fails (the API answers 503, an activity retries). */
const START_DEADLINE_MS = 5_000;

/**
 * Starts the call intelligence of a call (workflows/call-intelligence/call-intelligence.ts) and answers its workflow id.
 * Without rerunId it is the one run made when the answered call ended; with one it is the re-run that
 * request asked for. Starting twice is harmless: the id is refused a second run (already started is fine).
 */
export async function startCallIntelligence(
  client: Client,
  taskQueue: string,
  callId: string,
  rerunId?: string,
): Promise<{ workflowId: string }> {
  const workflowId = callIntelligenceWorkflowId(callId, rerunId);
  try {
    const input: CallIntelligenceInput = { callId };
    await client.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      startWorkflow(client, 'callIntelligenceWorkflow', {
        workflowId,
        taskQueue,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [input],
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return { workflowId };
}
