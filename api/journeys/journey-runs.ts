import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { JourneyDecision, JourneyRun } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import {
  awaitingFromRecord,
  missingStartFields,
  type AwaitedDecision,
  type JourneyDefinition,
  type RecordedRecovery,
} from '../../lib/journeys';
import type { JourneyRunStatus } from '../../lib/journeys/run-statuses';
import type { JourneyRunState, RecoveryDecision } from '../../lib/journeys/run-state';
import { journeyRunWorkflowId } from '../../lib/temporal/workflow-ids';
import { cancelJourneyRun, journeyRunLiveState, recoverJourneyRun, startJourneyRun } from '../../lib/temporal/journeys';
import type { Principal } from '../door/principal';
import { Refusal, forbidden } from '../../lib/refusal';
import { isUuid } from '../../lib/uuid';
import type { AppServices } from '../app-services';
import { findOwnedJourney } from './journeys';
import {
  deleteJourneyRun,
  insertJourneyRun,
  revisionDefinitions,
  runOfJourney,
  runsOfJourneyPage,
  runWithDecisions,
  savedJourneyRevision,
} from './journey-store';

type RunWithDecisions = JourneyRun & { decisions: JourneyDecision[] };
type RunRow = JourneyRun & { decisions?: JourneyDecision[] };

function runView(run: RunRow, awaiting: AwaitedDecision | null, live: JourneyRunState | null = null) {
  return {
    id: run.id,
    workflowId: run.journeyId,
    revision: run.revision,
    campaignId: run.campaignId,
    leadId: run.leadId,
    status: live?.status ?? run.status,
    currentNodeId: live?.currentNodeId ?? run.currentNodeId,
    trigger: run.trigger,
    variables: live?.variables ?? run.variables ?? null,
    attempt: live?.attempt ?? null,
    nextWakeAt: live?.nextWakeAt ?? null,
    awaiting,
    startedBy: run.startedBy,
    temporalWorkflowId: run.temporalWorkflowId,
    createdAt: run.createdAt.toISOString(),
    updatedAt: run.updatedAt.toISOString(),
    endedAt: run.endedAt?.toISOString() ?? null,
    ...(run.decisions && {
      decisions: run.decisions.map((decision) => ({
        nodeId: decision.nodeId,
        action: decision.action,
        output: decision.output,
        note: decision.note,
        decidedBy: decision.decidedBy,
        via: decision.via,
        at: decision.createdAt.toISOString(),
      })),
    }),
  };
}

/**
 * Runs as their rows have them. What a run waits for is rebuilt from its row and the graph of the
 * revision it runs, in the shape the run's own query gives: listed or read, live or not, alike.
 */
async function rowViews(db: AppServices['db'], runs: RunRow[]) {
  const waiting = runs.filter((run) => run.recovery !== null);
  const revisions = waiting.length === 0 ? [] : await revisionDefinitions(db, waiting);
  const definitionOf = (run: RunRow) =>
    revisions.find(({ journeyId, revision }) => journeyId === run.journeyId && revision === run.revision)
      ?.definition as JourneyDefinition | undefined;
  return runs.map((run) =>
    runView(run, awaitingFromRecord(run.recovery as RecordedRecovery | null, definitionOf(run))),
  );
}

export async function listRuns(
  { db }: AppServices,
  principal: Principal,
  journeyId: string,
  query: { status?: JourneyRunStatus; limit: number; offset: number },
) {
  await findOwnedJourney(db, principal.workspaceId, journeyId);
  const { runs, total } = await runsOfJourneyPage(db, principal.workspaceId, journeyId, query);
  return { runs: await rowViews(db, runs), total };
}

async function findOwnedRun(
  { db }: AppServices,
  principal: Principal,
  journeyId: string,
  runId: string,
): Promise<RunWithDecisions> {
  const run =
    isUuid(runId) && isUuid(journeyId) ? await runOfJourney(db, principal.workspaceId, journeyId, runId) : null;
  if (!run) throw forbidden();
  return run;
}

/** The run as its row has it, with the live state from its workflow while it has not ended. */
export async function getRun(services: AppServices, principal: Principal, journeyId: string, runId: string) {
  const run = await findOwnedRun(services, principal, journeyId, runId);
  let live: JourneyRunState | null = null;
  if (!run.endedAt) {
    live = await journeyRunLiveState(services.temporal, run.temporalWorkflowId)
      // Not started yet (the outbox has not reached it), or Temporal away: the row answers.
      .catch(() => null);
  }
  return live ? runView(run, live.awaiting, live) : (await rowViews(services.db, [run]))[0]!;
}

/** A run started by hand with the given trigger, on the journey's published revision; it has no lead, so its call nodes need recovery. */
export async function startRunByHand(
  services: AppServices,
  principal: Principal,
  journeyId: string,
  trigger: { phone?: string; name?: string; fields: Record<string, unknown> },
) {
  const journey = await findOwnedJourney(services.db, principal.workspaceId, journeyId);
  if (!journey.publishedRevision)
    throw new Refusal(ErrorCode.workflow_not_published, { detail: 'publish a revision first' });
  const revision = await savedJourneyRevision(services.db, journeyId, journey.publishedRevision);
  checkRequiredFields(revision.definition as unknown as JourneyDefinition, trigger.fields);
  const id = randomUUID();
  const run = await insertJourneyRun(services.db, {
    id,
    workspaceId: principal.workspaceId,
    journeyId,
    revision: journey.publishedRevision,
    temporalWorkflowId: journeyRunWorkflowId(id),
    trigger: { phone: trigger.phone ?? null, name: trigger.name ?? null, fields: trigger.fields } as object,
    startedBy: `key:${principal.keyId}`,
  });
  try {
    await startJourneyRun(services.temporal, services.taskQueue, {
      id,
      temporalWorkflowId: run.temporalWorkflowId,
      workspaceId: principal.workspaceId,
    });
  } catch (error) {
    // Not started: the caller is told (503) and nothing is left behind.
    await deleteJourneyRun(services.db, id);
    throw error;
  }
  return runView(run, null);
}

function checkRequiredFields(definition: JourneyDefinition, fields: Record<string, unknown>) {
  const missing = missingStartFields(definition, fields);
  if (missing.length) {
    throw new Refusal(ErrorCode.invalid_body, {
      issues: missing.map((name) => ({
        path: ['fields', name],
        message: "required by the journey's start node",
        code: 'custom',
      })),
    });
  }
}

/**
 * A run whose row says it is alive but whose workflow Temporal does not have running: not started yet
 * (the lead outbox starts it shortly), or ended outside the API (terminated in the Temporal UI).
 */
function notInTemporal(code: ErrorCode, run: JourneyRun) {
  return new Refusal(code, {
    status: run.status,
    detail: "the run's workflow is not running in Temporal: not started yet, or ended outside the API",
  });
}

/** Asks the run's workflow to cancel; it ends cancelled once its current step has stopped. */
export async function cancelRun(services: AppServices, principal: Principal, journeyId: string, runId: string) {
  const run = await findOwnedRun(services, principal, journeyId, runId);
  if (run.endedAt) throw new Refusal(ErrorCode.run_not_running, { status: run.status });
  await cancelJourneyRun(services.temporal, run.temporalWorkflowId).catch((error: unknown) => {
    if (error instanceof WorkflowNotFoundError) throw notInTemporal(ErrorCode.run_not_running, run);
    throw error;
  });
  return (await rowViews(services.db, [run]))[0]!;
}

/** An operator's decision, as an Update of the run: refused with 409 unless the run waits for one. */
export async function recoverRun(
  services: AppServices,
  principal: Principal,
  journeyId: string,
  runId: string,
  decision: Omit<RecoveryDecision, 'decidedBy' | 'via'>,
) {
  const run = await findOwnedRun(services, principal, journeyId, runId);
  if (run.endedAt) throw new Refusal(ErrorCode.run_not_awaiting_decision, { status: run.status });
  try {
    const state = await recoverJourneyRun(services.temporal, run.temporalWorkflowId, {
      ...decision,
      decidedBy: `member:${principal.memberId} key:${principal.keyId}`,
      via: 'api',
    });
    const updated = await runWithDecisions(services.db, run.id);
    // The Update answers once the decision is taken, maybe before the row says so: the state is newer.
    return runView(updated, state.awaiting, state.endedAt ? null : state);
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === ErrorCode.run_not_awaiting_decision) {
      throw new Refusal(ErrorCode.run_not_awaiting_decision, { status: run.status });
    }
    if (error instanceof WorkflowNotFoundError) throw notInTemporal(ErrorCode.run_not_awaiting_decision, run);
    if (cause instanceof ApplicationFailure && cause.type === ErrorCode.invalid_body) {
      const [field = 'action'] = cause.details as string[];
      throw new Refusal(ErrorCode.invalid_body, {
        issues: [{ path: [field], message: cause.message, code: 'custom' }],
      });
    }
    throw error;
  }
}
