/** gRPC status codes of a Temporal call that never reached a server able to answer it. */
const UNREACHABLE = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

/** True when a failure means the Temporal server could not be reached in time, not that it refused. */
export function isTemporalUnavailable(error: unknown): boolean {
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
