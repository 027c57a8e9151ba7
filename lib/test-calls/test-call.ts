import { createHash } from 'node:crypto';

/**
 * A test call's attempt id, the carrier's idempotency key and the Call's unique attemptId: with an
 * Idempotency-Key it is a function of workspace and key, so a retried request finds the call it placed
 * (the insert conflicts) instead of placing another; without one, the call's own id.
 */
export function testCallAttemptId(workspaceId: string, idempotencyKey: string | undefined, callId: string): string {
  return idempotencyKey === undefined
    ? `test:${callId}`
    : `test:${workspaceId}:${createHash('sha256').update(idempotencyKey).digest('base64url')}`;
}

/** What a test call's workflow is given, and what it answers. */
export interface TestCallInput {
  callId: string;
}

export interface TestCallResult {
  callId: string;
  /** A CallOutcome, or do_not_call when the number went on the list before it was dialed. */
  outcome: string;
  durationMs: number | null;
}
