import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { TestCallInput } from '../test-calls/test-call';
import { startWorkflow } from './start-workflow';

/** A healthy start takes milliseconds; one that hangs longer fails (503, and the call is withdrawn). */
const START_DEADLINE_MS = 5_000;

/**
 * Starts a recorded test call's workflow (workflows/test-calls/test-call.ts) under its stored workflow id
 * (testCallWorkflowId): one already started (a retried request) is fine. Any other failure is thrown (the
 * caller withdraws the call).
 */
export async function startTestCall(
  temporal: Client,
  taskQueue: string,
  call: { workflowId: string; workspaceId: string },
  input: TestCallInput,
): Promise<void> {
  try {
    await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      startWorkflow(temporal, 'testCallWorkflow', {
        workflowId: call.workflowId,
        taskQueue,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        searchAttributes: { WorkspaceId: [call.workspaceId] },
        args: [input],
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
