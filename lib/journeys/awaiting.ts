import type { JourneyDefinition } from './definition';

export type DecisionAction = 'retry' | 'skip' | 'end';

/**
 * What a run waiting for an operator waits for: `awaiting` of the journeyRunState query, and of the
 * API's runs, listed or read, live or from the row.
 */
export interface AwaitedDecision {
  nodeId: string;
  kind: 'recovery' | 'review';
  /** What went wrong (recovery) or what to check (review). */
  reason: string;
  errorType: string | null;
  allowedActions: DecisionAction[];
}

/** What the run's row keeps while it waits (JourneyRun.recovery); null otherwise. A type, not an interface: a JSON value. */
export type RecordedRecovery = {
  nodeId: string;
  error: string;
  errorType: string | null;
};

/** A failed node can be run again; a review node is only approved (skip) or ended. */
const ALLOWED_ACTIONS: Readonly<Record<AwaitedDecision['kind'], readonly DecisionAction[]>> = {
  recovery: ['retry', 'skip', 'end'],
  review: ['skip', 'end'],
};

export function awaitedDecision(
  kind: AwaitedDecision['kind'],
  nodeId: string,
  reason: string,
  errorType: string | null,
): AwaitedDecision {
  return { nodeId, kind, reason, errorType, allowedActions: [...ALLOWED_ACTIONS[kind]] };
}

export function recordOf(awaiting: AwaitedDecision): RecordedRecovery {
  return { nodeId: awaiting.nodeId, error: awaiting.reason, errorType: awaiting.errorType };
}

/**
 * The awaited decision as the run's workflow states it, rebuilt from its row and the revision it runs:
 * a review node waits with no error (one whose data is invalid fails with a type, and is recovered).
 */
export function awaitingFromRecord(
  recovery: RecordedRecovery | null,
  definition: JourneyDefinition | undefined,
): AwaitedDecision | null {
  if (!recovery) return null;
  const node = definition?.nodes.find((candidate) => candidate.id === recovery.nodeId);
  const kind = node?.type === 'review' && recovery.errorType === null ? 'review' : 'recovery';
  return awaitedDecision(kind, recovery.nodeId, recovery.error, recovery.errorType);
}
