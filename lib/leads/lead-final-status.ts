import type { RunSql } from '../run-sql';

/*
 * The one rule of a lead's final status (docs/features/leads.md#a-final-status-never-changes): once a lead is
 * completed, failed or cancelled, nothing changes its status again. A stop marks its leads cancelled while their calls
 * are still being hung up; the hung-up call's end (its statement, or the ladder's settleLead), a journey's end, a
 * withdrawal while paused: each writes its status only through this guard, so the first final status stands, and the
 * lead.finished event (one per lead and endpoint: its event key) reports it.
 */

export const FINAL_LEAD_STATUSES = ['completed', 'failed', 'cancelled'] as const;
export type LeadFinalStatus = (typeof FINAL_LEAD_STATUSES)[number];

/** The statuses a lead may still leave; the stop's and every writer's WHERE. */
export const OPEN_LEAD_STATUSES = ['queued', 'dialing'] as const;

/**
 * The SQL guard of every statement that writes a lead's status: true while the lead's status is not final. Under READ
 * COMMITTED an UPDATE that waited for a concurrent writer re-checks its WHERE on the row that writer left, so a stop
 * and a call's end racing each other leave the first final status in place.
 */
export const LEAD_STATUS_OPEN_SQL = (alias: string) =>
  `${alias}.status IN (${OPEN_LEAD_STATUSES.map((status) => `'${status}'`).join(', ')})`;

/**
 * Finishes a lead with status unless it is final already, in one statement. Answers null for no such lead; else
 * whether this call wrote the status, and whether its workspace has a live result webhook endpoint: a lead.finished is
 * owed either way (its enqueue is idempotent per lead, and reads the status a later statement sees, the first final
 * one), so that a retry after a write that committed still sends it. Not the status itself: a statement that waited
 * for a concurrent writer reads the row, outside its UPDATE, as its snapshot had it (still open).
 */
export async function finishLeadOnce(
  sql: RunSql,
  leadId: string,
  status: LeadFinalStatus,
): Promise<{ changed: boolean; hasEndpoint: boolean } | null> {
  const [row] = await sql<{ changed: boolean; hasEndpoint: boolean }>(
    {
      name: 'lead_finished_once',
      text: `WITH finished AS (
               UPDATE "Lead" l SET status = $2::"LeadStatus", "waitingFor" = NULL, "nextAttemptAt" = NULL,
                      "updatedAt" = (now() AT TIME ZONE 'UTC')
                WHERE l.id = $1::uuid AND ${LEAD_STATUS_OPEN_SQL('l')}
               RETURNING l.id
             )
             SELECT EXISTS (SELECT 1 FROM finished) AS changed,
                    EXISTS (SELECT 1 FROM "ResultWebhookEndpoint" e
                             WHERE e."workspaceId" = l."workspaceId" AND e."deletedAt" IS NULL) AS "hasEndpoint"
               FROM "Lead" l WHERE l.id = $1::uuid`,
    },
    leadId,
    status,
  );
  return row ?? null;
}
