import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';

/** gRPC status codes of a Temporal call that never reached a server able to answer it. */
const UNREACHABLE = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

/** True when a failure means the Temporal server could not be reached in time, not that it refused. */
export function isTemporalUnavailable(error: unknown): boolean {
  // An Update the server did not complete within the caller's deadline (a campaign's transition while the
  // server is overloaded): not a refusal; the transition may still be applied, and a retry says so (409).
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  for (
    let current = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    current && depth < 6;
    depth++
  ) {
    if (typeof current.code === 'number' && UNREACHABLE.has(current.code)) return true;
    current = current.cause as typeof current;
  }
  return false;
}
