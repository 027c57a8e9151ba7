import type { Client } from '@temporalio/client';
import type { TestCallInput } from '../test-calls/test-call';
import { startWorkflowOnce } from './start-workflow';

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
  await startWorkflowOnce(temporal, 'testCallWorkflow', {
    workflowId: call.workflowId,
    taskQueue,
    workspaceId: call.workspaceId,
    args: [input],
  });
}
