import type { Database } from '../database';
import type { RunSql } from '../run-sql';
import { LEAD_STATUS_OPEN_SQL } from '../leads/lead-final-status';
import { callsPlaced } from '../metrics/calls';
import { isUuid } from '../uuid';
import { NOW_UTC } from '../sql-clock';
import { callerConnectionSql } from '../carrier-connections/carrier-store';

/**
 * A campaign's lines: Campaign.callsInFlight counts its calls recorded as dialing. Each function here
 * is one statement, so the campaign row is locked only while that statement runs. Deciding an attempt
 * takes the row FOR UPDATE: decisions of one campaign are serialised, so the count can be trusted
 * against the cap, and a pause (an UPDATE of that row) either waits for a decision being made right now
 * and is acknowledged after it, or is seen by it. No attempt starts after a pause was acknowledged.
 */

export type AttemptVerdict =
  | 'started'
  | 'do_not_call'
  | 'campaign_on_hold'
  | 'campaign_stopped'
  /** No free line, or others wait ahead: the attempt is in its campaign's line queue. */
  | 'queued';

/** A call recorded for the attempt before this decision (a retry of it): the decision changed nothing. */
export interface RecordedAttempt {
  id: string;
  status: string;
  outcome: string | null;
  durationMs: number | null;
  providerCallId: string | null;
}

/** What the carrier is told of a call just recorded (lib/calls/carrier.ts CarrierDialRequest), read in the same statement. */
export interface DialRequestRow {
  fromNumber: string | null;
  /** The caller number's carrier connection when the call was recorded; null: the simulated carrier. */
  carrierConnectionId: string | null;
  testLead: unknown;
  hasLead: boolean;
  leadName: string | null;
  leadFields: unknown;
  agentId: string | null;
  language: string | null;
  voiceId: string | null;
  script: unknown;
  extractionFields: unknown;
}

export interface AttemptDecision {
  verdict: AttemptVerdict;
  phone: string;
  /** A line had been handed to the attempt in the queue (and is now used, or to be given back). */
  granted: boolean;
  /** The attempt's call, recorded before: nothing was decided (verdict as the campaign stands). */
  recorded: RecordedAttempt | null;
  /** verdict started: the call's id and what its dial request needs. */
  call: ({ id: string } & DialRequestRow) | null;
}

/**
 * Decides whether an attempt may start and, if so, records its call as dialing on a line, all in one statement
 * (the call's dial request read with it). A line is the attempt's when one was handed to it in the queue, or when
 * one is free and nobody waits ahead of it; else, while the campaign is not stopped, the attempt joins (or keeps
 * its place in) the queue and its lead says what it waits for. An attempt whose call was recorded before changes
 * nothing and is answered with that call. Null when the lead does not exist. A concurrent duplicate of the same
 * attempt inserts no second call and takes no second line.
 */
export async function takeLine(
  sql: RunSql,
  attempt: {
    leadId: string;
    attempt: number;
    attemptId: string;
    provider: string;
    /** The workflow that waits for the call's end (the carrier event endpoint signals it), and is woken by its line. */
    workflowId?: string | null;
    /** The agent of a journey's call node, instead of the campaign's (an agent of the lead's workspace). */
    agentId?: string;
    /** The outcomes on which the call's end settles its lead (Call.settlesLeadOn, applyCallEvents); none by default. */
    settlesLeadOn?: readonly string[];
  },
): Promise<AttemptDecision | null> {
  const [row] = await sql<{
    status: string;
    blocked: boolean;
    started: boolean;
    granted: boolean;
    phone: string;
    recorded: RecordedAttempt | null;
    call: ({ id: string } & DialRequestRow) | null;
  }>(
    // Named: on the worker's pool (Database.sql) each connection parses and plans it once.
    {
      name: 'take_line',
      text: `
    WITH lead AS (
      SELECT id, "campaignId", "workspaceId", phone, name, fields FROM "Lead" WHERE id = $1::uuid
    ), campaign AS (
      SELECT c.id, c.status::text AS status, c."callsInFlight" < c."maxConcurrentCalls" AS has_line,
             c."agentId", c."callerNumbers"[1] AS caller
        FROM "Campaign" c WHERE c.id = (SELECT "campaignId" FROM lead) FOR UPDATE
    ), connection AS (
      -- The caller number's live carrier connection: the call is placed through it and records its provider
      -- (a twin's calls never pass for real ones). None: the carrier the worker was given ($4, the simulated one).
      SELECT c.id, c.provider FROM lead, campaign,
             LATERAL (${callerConnectionSql('k.id, k.provider', 'lead."workspaceId"', 'campaign.caller')}) c
    ), recorded AS (
      SELECT id::text, status, outcome, "durationMs", "providerCallId" FROM "Call" WHERE "attemptId" = $3
    ), mine AS (
      SELECT seq, "grantedAt" IS NOT NULL AS granted FROM "LineQueue" WHERE "attemptId" = $3
    ), blocked AS (
      SELECT EXISTS (SELECT 1 FROM "DoNotCall" d, lead WHERE d."workspaceId" = lead."workspaceId" AND d.phone = lead.phone) AS yes
    ), decision AS (
      SELECT coalesce(mine.granted, false) AS granted, mine.seq IS NOT NULL AS in_queue,
             campaign.status = 'RUNNING' AND NOT blocked.yes AND NOT EXISTS (SELECT 1 FROM recorded)
               AND (coalesce(mine.granted, false) OR (campaign.has_line AND NOT EXISTS (
                     SELECT 1 FROM "LineQueue" q
                      WHERE q."campaignId" = campaign.id AND q."grantedAt" IS NULL AND q.seq < coalesce(mine.seq, 9223372036854775807)))) AS start
        FROM campaign CROSS JOIN blocked LEFT JOIN mine ON true
    ), call AS (
      INSERT INTO "Call" (id, "workspaceId", "campaignId", "leadId", attempt, "attemptId", provider, status, "startedAt",
                          "workflowId", "agentId", "fromNumber", "toNumber", "carrierConnectionId", "settlesLeadOn")
      SELECT gen_random_uuid(), lead."workspaceId", lead."campaignId", lead.id, $2, $3,
             coalesce((SELECT provider FROM connection), $4), 'dialing', ${NOW_UTC},
             -- A campaign of a running campaign may still hold a free-text agentId from before agents existed.
             $5, coalesce(
               (SELECT a.id FROM "Agent" a WHERE a.id = $6::uuid AND a."workspaceId" = lead."workspaceId"),
               CASE WHEN campaign."agentId" ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' THEN campaign."agentId"::uuid END),
             campaign.caller, lead.phone, (SELECT id FROM connection), $7::text[]
        FROM lead, campaign, decision
       WHERE decision.start
      ON CONFLICT ("attemptId") DO NOTHING
      RETURNING id, "campaignId", "agentId", "fromNumber", "carrierConnectionId"
    ), line AS (
      -- A line handed over in the queue is counted already.
      UPDATE "Campaign" c SET "callsInFlight" = c."callsInFlight" + 1
        FROM call, decision WHERE c.id = call."campaignId" AND NOT decision.granted
    ), left_queue AS (
      DELETE FROM "LineQueue" q USING call WHERE q."attemptId" = $3
    ), joined AS (
      INSERT INTO "LineQueue" ("campaignId", "leadId", "attemptId", "workflowId", "queuedAt")
      SELECT campaign.id, lead.id, $3, $5, ${NOW_UTC}
        FROM lead, campaign, decision, blocked
       WHERE NOT decision.start AND NOT decision.in_queue AND NOT blocked.yes AND campaign.status <> 'STOPPED'
         AND $5::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM recorded)
      ON CONFLICT ("attemptId") DO NOTHING
    ), lead_state AS (
      UPDATE "Lead" l
         SET status = CASE WHEN EXISTS (SELECT 1 FROM call) AND ${LEAD_STATUS_OPEN_SQL('l')} THEN 'dialing'::"LeadStatus" ELSE l.status END,
             "waitingFor" = CASE WHEN EXISTS (SELECT 1 FROM call) OR blocked.yes OR campaign.status = 'STOPPED' THEN NULL
                                 WHEN campaign.status = 'RUNNING' THEN 'line' ELSE 'campaign' END,
             "nextAttemptAt" = NULL, "updatedAt" = ${NOW_UTC},
             -- Asked by its running workflow: a lead queued by its push, started by the hand-over of its line, is
             -- marked started here, so the lead outbox leaves it alone (lib/temporal/lead-dispatch.ts).
             "workflowStartedAt" = CASE WHEN $5::text IS NULL THEN l."workflowStartedAt" ELSE coalesce(l."workflowStartedAt", ${NOW_UTC}) END
        FROM campaign, blocked
       WHERE l.id = $1::uuid AND NOT EXISTS (SELECT 1 FROM recorded)
    )
    SELECT campaign.status, blocked.yes AS blocked, call.id IS NOT NULL AS started, decision.granted, lead.phone,
           (SELECT row_to_json(recorded) FROM recorded) AS recorded,
           CASE WHEN call.id IS NULL THEN NULL ELSE json_build_object(
             'id', call.id::text, 'fromNumber', call."fromNumber", 'carrierConnectionId', call."carrierConnectionId"::text,
             'testLead', NULL, 'hasLead', true,
             'leadName', lead.name, 'leadFields', lead.fields, 'agentId', a.id::text, 'language', a.language,
             'voiceId', a."voiceId", 'script', a.script, 'extractionFields', a."extractionFields") END AS call
      FROM lead, campaign, blocked, decision LEFT JOIN call ON true LEFT JOIN "Agent" a ON a.id = call."agentId"`,
    },
    attempt.leadId,
    attempt.attempt,
    attempt.attemptId,
    attempt.provider,
    attempt.workflowId ?? null,
    attempt.agentId && isUuid(attempt.agentId) ? attempt.agentId : null,
    attempt.settlesLeadOn ?? [],
  );
  if (!row) return null;
  const verdict: AttemptVerdict = row.started
    ? 'started'
    : row.recorded
      ? // An earlier run of this very attempt recorded the call: it holds the line.
        row.status === 'STOPPED'
        ? 'campaign_stopped'
        : 'started'
      : row.status === 'STOPPED'
        ? 'campaign_stopped'
        : row.blocked
          ? 'do_not_call'
          : row.status !== 'RUNNING'
            ? 'campaign_on_hold'
            : 'queued';
  return { verdict, phone: row.phone, granted: row.granted, recorded: row.recorded, call: row.call };
}

/**
 * An attempt recorded as dialing that its provider never placed (the worker died in between): while
 * the campaign runs it keeps its line and is dialed now; otherwise the call is withdrawn, as if never
 * decided, and its line released.
 */
export async function resumeOrWithdraw(
  db: Pick<Database, '$queryRawUnsafe'>,
  attempt: { leadId: string; attemptId: string },
): Promise<(AttemptDecision & { handedOver: GrantedLine[] }) | null> {
  const [row] = await db.$queryRawUnsafe<Array<{ status: string; phone: string; granted: GrantedLine[] }>>(
    `
    WITH lead AS (
      SELECT id, "campaignId", phone FROM "Lead" WHERE id = $1::uuid
    ), campaign AS (
      SELECT c.id, c.status::text AS status FROM "Campaign" c WHERE c.id = (SELECT "campaignId" FROM lead) FOR UPDATE
    ), withdrawn AS (
      DELETE FROM "Call" WHERE "attemptId" = $2 AND status = 'dialing' AND (SELECT status FROM campaign) <> 'RUNNING'
      RETURNING "campaignId"
    ), freeing AS (
      SELECT "campaignId" AS campaign_id, 1 AS freed FROM withdrawn
    ), ${HAND_OVER_LINES_CTES}, queued AS (
      -- A call withdrawn by a pause or a stop: a lead the stop cancelled keeps its final status.
      UPDATE "Lead" l SET status = 'queued', "updatedAt" = ${NOW_UTC} FROM withdrawn WHERE l.id = $1::uuid AND ${LEAD_STATUS_OPEN_SQL('l')}
    )
    SELECT campaign.status, lead.phone, ${GRANTED_JSON} FROM lead, campaign`,
    attempt.leadId,
    attempt.attemptId,
  );
  if (!row) return null;
  const verdict: AttemptVerdict =
    row.status === 'RUNNING' ? 'started' : row.status === 'STOPPED' ? 'campaign_stopped' : 'campaign_on_hold';
  return { verdict, phone: row.phone, granted: false, recorded: null, call: null, handedOver: row.granted };
}

/**
 * Records how a dialing call ended and gives its line back (handed to the first of its campaign's queue), once: a
 * second call changes nothing. Answers the call and the entries its line was handed to.
 */
export async function endCall(
  db: Pick<Database, '$queryRawUnsafe' | 'call'>,
  attemptId: string,
  result: { providerCallId: string | null; outcome: string; durationMs: number | null },
): Promise<{ id: string; outcome: string; durationMs: number | null; handedOver: GrantedLine[] }> {
  const [ended] = await db.$queryRawUnsafe<
    Array<{ id: string; outcome: string; durationMs: number | null; granted: GrantedLine[] }>
  >(
    `
    WITH ended AS (
      UPDATE "Call" SET status = 'ended', "providerCallId" = coalesce($2, "providerCallId"), outcome = $3, "durationMs" = $4, "endedAt" = ${NOW_UTC}
       WHERE "attemptId" = $1 AND status = 'dialing'
      RETURNING id, "campaignId", outcome, "durationMs"
    ), freeing AS (
      SELECT "campaignId" AS campaign_id, 1 AS freed FROM ended WHERE "campaignId" IS NOT NULL
    ), ${HAND_OVER_LINES_CTES}
    SELECT id::text, outcome, "durationMs", ${GRANTED_JSON} FROM ended`,
    attemptId,
    result.providerCallId,
    result.outcome,
    result.durationMs,
  );
  if (ended) {
    callsPlaced.inc({ outcome: ended.outcome });
    return { id: ended.id, outcome: ended.outcome, durationMs: ended.durationMs, handedOver: ended.granted };
  }
  const call = await db.call.findUniqueOrThrow({
    where: { attemptId },
    select: { id: true, outcome: true, durationMs: true },
  });
  return { id: call.id, outcome: call.outcome ?? result.outcome, durationMs: call.durationMs, handedOver: [] };
}

/*
 * The line queue (docs/features/dial-ladder.md#lines-handed-out). An attempt that finds no free line (or its
 * campaign not running) joins its campaign's queue, "LineQueue", ordered by seq, and sleeps. A line given back is
 * handed, in the same statement, to the first entry not yet granted: the entry is marked granted and the line
 * stays counted in callsInFlight, so no newcomer can take it; the entry's workflow is then woken
 * (lib/temporal/line-queue.ts wakeLineHolders) and its next attempt records its call on that line. A newcomer
 * takes a free line only when nobody waits ahead of it: first queued, first handed a line.
 */

/** An entry a line was just handed to: its workflow is to be woken. */
export interface GrantedLine {
  leadId: string;
  campaignId: string;
  attemptId: string;
  workspaceId: string;
  workflowId: string;
  /** Queued by its push: its workflow was started with a delay (or not yet), so it is woken by signal-with-start. */
  byPush: boolean;
}

/**
 * CTEs that give `freeing.freed` lines back to the campaign `freeing.campaign_id` and hand each line that is then
 * free (below the cap, while the campaign runs) to the first entries of its queue not yet granted. The statement
 * defines `freeing (campaign_id, freed)` before them, with at most one row per campaign (several campaigns: a batch
 * of carrier events, lib/calls/call-end.ts); they expose `granted_lines`, whose rows are GrantedLine. Lines above a
 * lowered cap are only given back. The campaign rows are locked (FOR UPDATE), as every decision about their lines
 * does, in id order, so that two statements freeing lines of the same campaigns cannot deadlock.
 */
export const HAND_OVER_LINES_CTES = `
  lines AS (
    SELECT k.id, k.status::text AS status, k."maxConcurrentCalls" AS cap, greatest(k."callsInFlight" - freeing.freed, 0) AS kept
      FROM "Campaign" k JOIN freeing ON k.id = freeing.campaign_id
     ORDER BY k.id
       FOR UPDATE OF k
  ), next_in_line AS (
    SELECT n.seq FROM lines CROSS JOIN LATERAL (
      SELECT q.seq FROM "LineQueue" q
       WHERE q."campaignId" = lines.id AND q."grantedAt" IS NULL AND lines.status = 'RUNNING'
       ORDER BY q.seq
       LIMIT greatest(lines.cap - lines.kept, 0)
         FOR UPDATE OF q SKIP LOCKED
    ) n
  ), granted AS (
    UPDATE "LineQueue" q SET "grantedAt" = ${NOW_UTC}, "wokenAt" = ${NOW_UTC}
      FROM next_in_line WHERE q.seq = next_in_line.seq
    RETURNING q."leadId", q."campaignId", q."attemptId", q."workflowId", q."byPush"
  ), counted AS (
    UPDATE "Campaign" k SET "callsInFlight" = lines.kept + (SELECT count(*) FROM granted WHERE granted."campaignId" = lines.id)::int
      FROM lines WHERE k.id = lines.id
  ), granted_lines AS (
    UPDATE "Lead" l SET "waitingFor" = NULL, "updatedAt" = ${NOW_UTC} FROM granted WHERE l.id = granted."leadId"
    RETURNING granted."leadId"::text AS "leadId", granted."campaignId"::text AS "campaignId", granted."attemptId",
              l."workspaceId"::text AS "workspaceId", granted."workflowId", granted."byPush"
  )`;

/** The granted_lines of a statement as one JSON array column, "granted". */
const GRANTED_JSON = `coalesce((SELECT json_agg(granted_lines) FROM granted_lines), '[]'::json) AS granted`;

/**
 * Hands the campaign's free lines (a resume, a raised cap, a push) to the first entries of its queue. Answers the
 * entries granted, whose workflows are to be woken.
 */
export async function handOutFreeLines(sql: RunSql, campaignId: string): Promise<GrantedLine[]> {
  const [row] = await sql<{ granted: GrantedLine[] }>(
    `WITH freeing AS (SELECT $1::uuid AS campaign_id, 0 AS freed), ${HAND_OVER_LINES_CTES} SELECT ${GRANTED_JSON}`,
    campaignId,
  );
  return row?.granted ?? [];
}

/**
 * The attempt leaves its campaign's queue without a call (its calling window closed, its number on the Do-Not-Call
 * list, its workflow gone): a line handed to it goes to the next entry. The lead then says what it waits for
 * (waitingFor, nextAttemptAt), unless undefined. Answers the entries granted.
 */
export async function leaveLineQueue(
  sql: RunSql,
  attemptId: string,
  waiting?: { leadId: string; waitingFor: string | null; nextAttemptAt: string | null },
): Promise<GrantedLine[]> {
  const [row] = await sql<{ granted: GrantedLine[] }>(
    `WITH left_queue AS (
       DELETE FROM "LineQueue" WHERE "attemptId" = $1 RETURNING "campaignId", "grantedAt" IS NOT NULL AS granted
     ), freeing AS (SELECT "campaignId" AS campaign_id, 1 AS freed FROM left_queue WHERE granted),
     ${HAND_OVER_LINES_CTES}, waiting AS (
       -- Said by the lead's running workflow, which marks it started too (as takeLine does).
       UPDATE "Lead" SET "waitingFor" = $3, "nextAttemptAt" = $4::timestamptz AT TIME ZONE 'UTC', "updatedAt" = ${NOW_UTC},
              "workflowStartedAt" = coalesce("workflowStartedAt", ${NOW_UTC})
        WHERE id = $2::uuid
     )
     SELECT ${GRANTED_JSON}`,
    attemptId,
    waiting?.leadId ?? null,
    waiting?.waitingFor ?? null,
    waiting?.nextAttemptAt ?? null,
  );
  return row?.granted ?? [];
}
