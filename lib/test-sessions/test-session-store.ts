import type { RunSql } from '../run-sql';

/**
 * A web test session's SQL shared by the API (api/test-sessions/) and the worker's sweep of abandoned holds
 * (lib/credits/abandoned-holds.ts): docs/features/test-sessions.md.
 */

/** The credit reference of a session's hold and charge (CreditLedgerEntry.referenceType). */
export const TEST_SESSION_REFERENCE = 'test_session';

/** The longest a session lasts: it is ended (max_length) then, and its hold reserves up to this. */
export const TEST_SESSION_MAX_LENGTH_MS = 15 * 60_000;

/** Why a session ended (TestSession.endReason). */
export const TEST_SESSION_END_REASONS = [
  'agent_ended',
  'client_ended',
  'client_dropped',
  'idle_timeout',
  'max_length',
  'api_stopping',
  'abandoned',
  'never_connected',
] as const;
export type TestSessionEndReason = (typeof TEST_SESSION_END_REASONS)[number];

/** What a session came to (TestSession.outcome): a tool's outcome, else whether the agent finished its script. */
export const TEST_SESSION_OUTCOMES = [
  'completed',
  'opted_out',
  'callback_requested',
  'transferred',
  'incomplete',
] as const;
export type TestSessionOutcome = (typeof TEST_SESSION_OUTCOMES)[number];

export interface EndedTestSession {
  id: string;
  workspaceId: string;
  endReason: string;
  outcome: string;
  /** From the socket's opening to the end; null: never connected. */
  durationMs: number | null;
}

/**
 * Ends a session still on, once (null: it had ended, nothing changes), as `reason` (never_connected whatever the
 * reason when its socket never opened): endedAt now (`at: 'last_activity'`: its last
 * frame, for a session whose process died), its duration from connectedAt (a connected session lasts 1 ms at least),
 * and its outcome: the one a tool marked, else `completed` when the agent finished (`finished`), else `incomplete`.
 */
export async function endTestSession(
  sql: RunSql,
  sessionId: string,
  end: { reason: TestSessionEndReason; finished: boolean; at?: 'now' | 'last_activity' },
): Promise<EndedTestSession | null> {
  const [row] = await sql<EndedTestSession>(
    {
      name: 'test_session_end',
      text: `WITH ending AS (
               SELECT id, CASE WHEN $4::boolean THEN coalesce("lastActivityAt", "connectedAt", "createdAt")
                               ELSE now() AT TIME ZONE 'UTC' END AS at
                 FROM "TestSession" WHERE id = $1::uuid AND "endedAt" IS NULL FOR UPDATE)
             UPDATE "TestSession" s SET "endedAt" = ending.at,
                    "endReason" = CASE WHEN s."connectedAt" IS NULL THEN 'never_connected' ELSE $2 END,
                    outcome = coalesce(s.outcome, CASE WHEN $3::boolean THEN 'completed' ELSE 'incomplete' END),
                    "durationMs" = CASE WHEN s."connectedAt" IS NULL THEN NULL
                      ELSE greatest(1, round(extract(epoch FROM ending.at - s."connectedAt") * 1000))::int END
               FROM ending WHERE s.id = ending.id
             RETURNING s.id::text, s."workspaceId"::text, s."endReason", s.outcome, s."durationMs"`,
    },
    sessionId,
    end.reason,
    end.finished,
    end.at === 'last_activity',
  );
  return row ?? null;
}

/** An ended session as its billing reads it (null: unknown). */
export async function testSessionOf(
  sql: RunSql,
  sessionId: string,
): Promise<{ workspaceId: string; endedAt: Date | null; durationMs: number | null } | null> {
  const [row] = await sql<{ workspaceId: string; endedAt: Date | null; durationMs: number | null }>(
    {
      name: 'test_session_of',
      text: `SELECT "workspaceId"::text, "endedAt", "durationMs" FROM "TestSession" WHERE id = $1::uuid`,
    },
    sessionId,
  );
  return row ?? null;
}
