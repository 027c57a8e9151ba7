import type { AwaitedDecision, DecisionAction } from './awaiting';
import type { FinalRunStatus, JourneyRunStatus } from './run-statuses';

/*
 * What journeyRunWorkflow (workflows/journeys/journey-run.ts) is started with and answers, its state as the
 * journeyRunState query and the recover Update tell it, and an operator's decision: types only, so that
 * whoever starts, queries or updates a run (lib/temporal/) loads no workflow code.
 */

export interface JourneyRunInput {
  runId: string;
}

/** An operator's answer to a run that waits for one (a failed node, or a review node). */
export interface RecoveryDecision {
  action: DecisionAction;
  /** skip: the node's output, as if it had run (the review node's: { decision, note }). */
  output?: Record<string, unknown>;
  note?: string;
  /** Who decided; recorded with the decision. The Update refuses a decision without it; a signal without it is recorded as "unknown operator". */
  decidedBy?: string;
  /** api, or temporal when sent from the Temporal UI or CLI (the default). */
  via?: string;
}

export interface JourneyRunState {
  status: JourneyRunStatus;
  currentNodeId: string | null;
  variables: Record<string, unknown>;
  /** Attempt at the current node: 1, plus one per retry an operator decided. */
  attempt: number;
  nextWakeAt: string | null;
  awaiting: AwaitedDecision | null;
  decisions: Array<
    Required<Pick<RecoveryDecision, 'action' | 'decidedBy' | 'via'>> & {
      nodeId: string;
      note: string | null;
      at: string;
    }
  >;
  endedAt: string | null;
}

export interface JourneyRunResult {
  status: FinalRunStatus;
  endNodeId: string | null;
  variables: Record<string, unknown>;
}
