import type { Database } from '../database';
import { callsPlaced } from '../metrics/calls';
import { isUuid } from '../uuid';

/**
 * A campaign's lines: Campaign.callsInFlight counts its calls recorded as dialing. Each function here
 * is one statement, so the campaign row is locked only while that statement runs. Deciding an attempt
 * takes the row FOR UPDATE: decisions of one campaign are serialised, so the count can be trusted
 * against the cap, and a pause (an UPDATE of that row) either waits for a decision being made right now
 * and is acknowledged after it, or is seen by it. No attempt starts after a pause was acknowledged.
 */

export type AttemptVerdict =
  'started' | 'do_not_call' | 'campaign_on_hold' | 'campaign_stopped' | 'campaign_at_capacity';

export interface AttemptDecision {
  verdict: AttemptVerdict;
  phone: string;
}

/** Now, as the UTC wall-clock time the call columns (timestamp without time zone) hold. */
export const NOW_UTC = `(now() AT TIME ZONE 'UTC')`;

/**
 * Decides whether an attempt may start and, if so, records its call as dialing and takes a line, all
 * at once. Null when the lead does not exist. A concurrent duplicate of the same attempt inserts no
 * second call and takes no second line.
 */
export async function takeLine(
  db: Database,
  attempt: {
    leadId: string;
    attempt: number;
    attemptId: string;
    provider: string;
    /** The workflow that waits for the call's end (the carrier event endpoint signals it). */
    workflowId?: string | null;
    /** The agent of a journey's call node, instead of the campaign's (an agent of the lead's workspace). */
    agentId?: string;
  },
): Promise<AttemptDecision | null> {
  const [row] = await db.$queryRawUnsafe<
    Array<{ status: string; has_line: boolean; blocked: boolean; started: boolean; phone: string }>
  >(
    `
    WITH lead AS (
      SELECT id, "campaignId", "workspaceId", phone FROM "Lead" WHERE id = $1::uuid
    ), campaign AS (
      SELECT c.id, c.status::text AS status, c."callsInFlight" < c."maxConcurrentCalls" AS has_line,
             c."agentId", c."callerNumbers"[1] AS caller
        FROM "Campaign" c WHERE c.id = (SELECT "campaignId" FROM lead) FOR UPDATE
    ), blocked AS (
      SELECT EXISTS (SELECT 1 FROM "DoNotCall" d, lead WHERE d."workspaceId" = lead."workspaceId" AND d.phone = lead.phone) AS yes
    ), call AS (
      INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, "startedAt",
                          "workflowId", "agentId", "fromNumber", "toNumber")
      SELECT gen_random_uuid(), lead."workspaceId", lead."campaignId", lead.id, $2, $3, $4, 'dialing', ${NOW_UTC},
             -- A campaign of a running campaign may still hold a free-text agentId from before agents existed.
             $5, coalesce(
               (SELECT a.id FROM "Agent" a WHERE a.id = $6::uuid AND a."workspaceId" = lead."workspaceId"),
               CASE WHEN campaign."agentId" ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' THEN campaign."agentId"::uuid END),
             campaign.caller, lead.phone
        FROM lead, campaign, blocked
       WHERE campaign.status = 'RUNNING' AND campaign.has_line AND NOT blocked.yes
      ON CONFLICT ("attemptId") DO NOTHING
      RETURNING "campaignId"
    ), line AS (
      UPDATE "Campaign" c SET "callsInFlight" = c."callsInFlight" + 1 FROM call WHERE c.id = call."campaignId" RETURNING c.id
    ), dialing AS (
      UPDATE "Lead" l SET status = 'dialing', "updatedAt" = ${NOW_UTC} FROM call WHERE l.id = $1::uuid RETURNING l.id
    )
    SELECT campaign.status, campaign.has_line, blocked.yes AS blocked, EXISTS (SELECT 1 FROM line) AS started, lead.phone
      FROM lead, campaign, blocked`,
    attempt.leadId,
    attempt.attempt,
    attempt.attemptId,
    attempt.provider,
    attempt.workflowId ?? null,
    attempt.agentId && isUuid(attempt.agentId) ? attempt.agentId : null,
  );
  if (!row) return null;
  const verdict: AttemptVerdict = row.started
    ? 'started'
    : row.status === 'STOPPED'
      ? 'campaign_stopped'
      : row.status !== 'RUNNING'
        ? 'campaign_on_hold'
        : row.blocked
          ? 'do_not_call'
          : row.has_line
            ? 'started' // an earlier run of this very attempt recorded the call: it holds the line
            : 'campaign_at_capacity';
  return { verdict, phone: row.phone };
}

/**
 * An attempt recorded as dialing that its provider never placed (the worker died in between): while
 * the campaign runs it keeps its line and is dialed now; otherwise the call is withdrawn, as if never
 * decided, and its line released.
 */
export async function resumeOrWithdraw(
  db: Database,
  attempt: { leadId: string; attemptId: string },
): Promise<AttemptDecision | null> {
  const [row] = await db.$queryRawUnsafe<Array<{ status: string; phone: string }>>(
    `
    WITH lead AS (
      SELECT id, "campaignId", phone FROM "Lead" WHERE id = $1::uuid
    ), campaign AS (
      SELECT c.id, c.status::text AS status FROM "Campaign" c WHERE c.id = (SELECT "campaignId" FROM lead) FOR UPDATE
    ), withdrawn AS (
      DELETE FROM "Call" WHERE "attemptId" = $2 AND status = 'dialing' AND (SELECT status FROM campaign) <> 'RUNNING'
      RETURNING "campaignId"
    ), line AS (
      UPDATE "Campaign" c SET "callsInFlight" = greatest(c."callsInFlight" - 1, 0) FROM withdrawn WHERE c.id = withdrawn."campaignId"
    ), queued AS (
      UPDATE "Lead" l SET status = 'queued', "updatedAt" = ${NOW_UTC} FROM withdrawn WHERE l.id = $1::uuid
    )
    SELECT campaign.status, lead.phone FROM lead, campaign`,
    attempt.leadId,
    attempt.attemptId,
  );
  if (!row) return null;
  const verdict: AttemptVerdict =
    row.status === 'RUNNING' ? 'started' : row.status === 'STOPPED' ? 'campaign_stopped' : 'campaign_on_hold';
  return { verdict, phone: row.phone };
}

/** Records how a dialing call ended and releases its line, once: a second call changes nothing. */
export async function endCall(
  db: Pick<Database, '$queryRawUnsafe' | 'call'>,
  attemptId: string,
  result: { providerCallId: string | null; outcome: string; durationMs: number | null },
): Promise<{ id: string; outcome: string; durationMs: number | null }> {
  const [ended] = await db.$queryRawUnsafe<Array<{ id: string; outcome: string; durationMs: number | null }>>(
    `
    WITH ended AS (
      UPDATE "Call" SET status = 'ended', "providerCallId" = coalesce($2, "providerCallId"), outcome = $3, "durationMs" = $4, "endedAt" = ${NOW_UTC}
       WHERE "attemptId" = $1 AND status = 'dialing'
      RETURNING id, "campaignId", outcome, "durationMs"
    ), line AS (
      UPDATE "Campaign" c SET "callsInFlight" = greatest(c."callsInFlight" - 1, 0) FROM ended WHERE c.id = ended."campaignId"
    )
    SELECT id::text, outcome, "durationMs" FROM ended`,
    attemptId,
    result.providerCallId,
    result.outcome,
    result.durationMs,
  );
  if (ended) {
    callsPlaced.inc({ outcome: ended.outcome });
    return ended;
  }
  const call = await db.call.findUniqueOrThrow({
    where: { attemptId },
    select: { id: true, outcome: true, durationMs: true },
  });
  return { id: call.id, outcome: call.outcome ?? result.outcome, durationMs: call.durationMs };
}
