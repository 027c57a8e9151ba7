import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { SpeechAnalysisInput } from '../speech/speech-analysis';
import { startWorkflow } from './start-workflow';

/** A healthy start takes milliseconds; one that hangs longer fails (503, and the upload is withdrawn). */
const START_DEADLINE_MS = 5_000;

/**
 * Starts the analysis of an uploaded recording (workflows/speech/speech-analysis.ts) under its stored workflow id
 * (speechAnalysisWorkflowId): one already started is fine. Any other failure is thrown (the caller withdraws
 * the upload).
 */
export async function startSpeechAnalysis(
  temporal: Client,
  taskQueue: string,
  workflowId: string,
  input: SpeechAnalysisInput,
): Promise<void> {
  try {
    await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      startWorkflow(temporal, 'speechAnalysisWorkflow', {
        workflowId,
        taskQueue,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        searchAttributes: { WorkspaceId: [input.workspaceId] },
        args: [input],
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
