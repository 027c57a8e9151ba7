/**
 * A journey run's statuses, the one list: the workflow reports them, the activities record them, the
 * API lists and filters by them. The JourneyRun table's enum holds the same values (a test compares).
 */
export const JOURNEY_RUN_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'needs_recovery'] as const;
export type JourneyRunStatus = (typeof JOURNEY_RUN_STATUSES)[number];

/** A run ends in one of these: its row gets endedAt, and its lead, if any, the same status. */
export const FINAL_RUN_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly JourneyRunStatus[];
export type FinalRunStatus = (typeof FINAL_RUN_STATUSES)[number];

/** A run in one of these is alive: it counts against its campaign's live cap (maxLiveRuns). */
export const LIVE_RUN_STATUSES = ['running', 'needs_recovery'] as const satisfies readonly JourneyRunStatus[];

export function isFinalRunStatus(status: JourneyRunStatus): status is FinalRunStatus {
  return (FINAL_RUN_STATUSES as readonly JourneyRunStatus[]).includes(status);
}
