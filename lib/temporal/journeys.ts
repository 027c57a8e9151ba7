import type { Client } from '@temporalio/client';
import type { JourneyRunState, RecoveryDecision } from '../journeys/run-state';
import { journeyRunStateQuery, recoverUpdate } from './messages';
import { startWorkflow } from './start-workflow';

/*
 * A journey run's workflow (workflows/journeys/journey-run.ts) as the API reaches it: a run started by hand, its
 * live state, its cancellation and an operator's decision. A pushed lead's run is started by the lead outbox
 * (lib/temporal/start-lead-workflow.ts). Failures are thrown as the SDK's errors, which the caller reads.
 */

/** A live run answers its state query in milliseconds; past this the caller answers the row's state alone. */
const LIVE_STATE_DEADLINE_MS = 3_000;
const START_DEADLINE_MS = 5_000;

/** Starts a run made by hand (POST /workflows/{id}/runs) under its stored workflow id. */
export async function startJourneyRun(
  temporal: Client,
  taskQueue: string,
  run: { id: string; temporalWorkflowId: string; workspaceId: string },
): Promise<void> {
  await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
    startWorkflow(temporal, 'journeyRunWorkflow', {
      workflowId: run.temporalWorkflowId,
      taskQueue,
      args: [{ runId: run.id }],
      searchAttributes: { WorkspaceId: [run.workspaceId] },
    }),
  );
}

/** The run's live state, from its journeyRunState query. */
export async function journeyRunLiveState(temporal: Client, workflowId: string): Promise<JourneyRunState> {
  return temporal.connection.withDeadline(Date.now() + LIVE_STATE_DEADLINE_MS, () =>
    temporal.workflow.getHandle(workflowId).query(journeyRunStateQuery),
  );
}

/** Asks the run's workflow to cancel; it ends cancelled once its current step has stopped. */
export async function cancelJourneyRun(temporal: Client, workflowId: string): Promise<void> {
  await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
    temporal.workflow.getHandle(workflowId).cancel(),
  );
}

/** An operator's decision, as the run's recover Update: answers the run's state once the decision is taken. */
export async function recoverJourneyRun(
  temporal: Client,
  workflowId: string,
  decision: RecoveryDecision,
): Promise<JourneyRunState> {
  return temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
    temporal.workflow.getHandle(workflowId).executeUpdate(recoverUpdate, { args: [decision] }),
  );
}
