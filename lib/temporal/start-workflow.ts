import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowIdConflictPolicy,
  type WorkflowSignalWithStartOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { WithWorkflowArgs } from '@temporalio/common';
import type { WorkflowContracts, WorkflowType } from './workflow-contracts';

/*
 * The SDK's three ways of starting a workflow, by its type's name, typed by its contract
 * (lib/temporal/workflow-contracts.ts): a name that is no workflow's, or arguments that are not its input,
 * do not compile. The floor's modules start workflows through these; nothing else does.
 */

/** client.workflow.start, by contract. */
export function startWorkflow<T extends WorkflowType>(
  temporal: Client,
  type: T,
  options: WorkflowStartOptions<WorkflowContracts[T]>,
) {
  return temporal.workflow.start<WorkflowContracts[T]>(type, options);
}

/** client.workflow.signalWithStart, by contract: the workflow started with its input unless it runs, then signalled. */
export function signalWithStartWorkflow<T extends WorkflowType, SignalArgs extends unknown[] = []>(
  temporal: Client,
  type: T,
  options: WithWorkflowArgs<WorkflowContracts[T], WorkflowSignalWithStartOptions<SignalArgs>>,
) {
  return temporal.workflow.signalWithStart<WorkflowContracts[T], SignalArgs>(type, options);
}

/** The start half of an update-with-start (client.workflow.executeUpdateWithStart), by contract. */
export function startWorkflowOperation<T extends WorkflowType>(
  type: T,
  options: WorkflowStartOptions<WorkflowContracts[T]> & { workflowIdConflictPolicy: WorkflowIdConflictPolicy },
) {
  return new WithStartWorkflowOperation<WorkflowContracts[T]>(type, options);
}

/** A healthy start takes milliseconds; one that hangs longer fails (the caller answers 503, or withdraws what it recorded). */
const START_ONCE_DEADLINE_MS = 5_000;

/**
 * Starts a workspace's workflow once under its id (REJECT_DUPLICATE, the WorkspaceId search attribute): one already
 * started, running or finished, is left alone (a retried request); any other failure, or none within 5 s, is thrown.
 */
export async function startWorkflowOnce<T extends WorkflowType>(
  temporal: Client,
  type: T,
  options: WorkflowStartOptions<WorkflowContracts[T]> & { workspaceId: string },
): Promise<void> {
  const { workspaceId, ...start } = options;
  try {
    await temporal.connection.withDeadline(Date.now() + START_ONCE_DEADLINE_MS, () =>
      startWorkflow(temporal, type, {
        ...start,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        searchAttributes: { WorkspaceId: [workspaceId] },
      } as WorkflowStartOptions<WorkflowContracts[T]>),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
