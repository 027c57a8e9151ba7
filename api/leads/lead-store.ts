import type { PoolClient } from 'pg';
import type { Campaign, Prisma } from '../../generated/prisma/client';
import type { JourneyDefinition } from '../../lib/journeys';
import { LIVE_RUN_STATUSES } from '../../lib/journeys/run-statuses';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import { NOW_UTC } from '../../lib/sql-clock';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { afterCursor, type CursorPosition } from '../http/pagination';
import type { LeadRow, LeadToAdmit } from './admission';

/** The leads' SQL (docs/features/leads.md): intake's writes, the results' reads and the Do-Not-Call list's. */

type Db = AppServices['db'];
/** A connection inside intake's transaction (pg), or the pool. */
type Client = Pick<PoolClient, 'query'>;

/**
 * Inserts the leads whose keys are new and returns the row of every key, new or not, in one
 * statement: the unique (campaignId, idempotencyKey) constraint settles races between requests. A CLASSIC
 * voice campaign's new leads join its line queue in the same statement, in the batch's order
 * (docs/features/dial-ladder.md#lines-handed-out): each one's workflow starts when a line is handed to it, and a
 * lead is never stored without its place.
 */
export async function upsertLeads(
  sql: Pick<PoolClient, 'query'>,
  principal: Principal,
  campaign: Campaign,
  unique: readonly LeadToAdmit[],
  requestId: string,
): Promise<LeadRow[]> {
  const { rows } = await sql.query<LeadRow>({
    name: 'upsert_leads',
    text: `
      WITH campaign AS (
        -- Read under a share lock: a pause or resume committing now is waited for and seen, and one that comes after
        -- waits for these rows and moves them with the rest of the queue (activities/campaigns/campaigns.ts).
        SELECT CASE WHEN status = 'RUNNING' THEN 'line' ELSE 'campaign' END AS waiting
          FROM "Campaign" WHERE id = $2::uuid AND $9::text IS NOT NULL FOR SHARE
      ), stored AS (
        INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt", "waitingFor")
        SELECT gen_random_uuid(), $1::uuid, $2::uuid, t.key, t.phone, t.name, t.fields, t.workflow_id, $3::uuid, now(),
               (SELECT waiting FROM campaign)
          FROM unnest($4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[]) AS t(key, phone, name, fields, workflow_id)
        ON CONFLICT ("campaignId", "idempotencyKey") DO UPDATE SET "idempotencyKey" = EXCLUDED."idempotencyKey"
        RETURNING id, "idempotencyKey", "workflowId", "workflowStartedAt", (xmax = 0) AS inserted
      ), queued AS (
        INSERT INTO "LineQueue" ("campaignId", "leadId", "attemptId", "workflowId", "byPush", "queuedAt")
        SELECT $2::uuid, stored.id, stored.id::text || ':1', stored."workflowId", true, ${NOW_UTC}
          FROM stored JOIN unnest($4::text[]) WITH ORDINALITY AS k(key, position) ON k.key = stored."idempotencyKey"
         WHERE stored.inserted AND $9::text IS NOT NULL
         ORDER BY k.position
        ON CONFLICT ("attemptId") DO NOTHING
      )
      SELECT * FROM stored`,
    values: [
      principal.workspaceId,
      campaign.id,
      requestId,
      unique.map((lead) => lead.idempotencyKey),
      unique.map((lead) => lead.lead.phone),
      unique.map((lead) => lead.lead.name ?? null),
      unique.map((lead) => JSON.stringify(lead.lead.fields)),
      unique.map((lead) => leadWorkflowId(campaign.id, lead.idempotencyKey)),
      // Whether the lead joins its campaign's line queue (a CLASSIC voice lead); null: it does not.
      leadWorkflowKind(campaign) === 'CLASSIC' ? 'queued' : null,
    ],
  });
  return rows;
}

/** The numbers new to the workspace's Do-Not-Call list are added, listed by the API; answers how many. */
export async function insertDoNotCallNumbers(db: Db, workspaceId: string, phones: readonly string[]): Promise<number> {
  const { count } = await db.doNotCall.createMany({
    data: phones.map((phone) => ({ workspaceId, phone, source: 'api' })),
    skipDuplicates: true,
  });
  return count;
}

/**
 * Which of these leads were ended by an opt-out (docs/features/leads.md#the-do-not-call-list): cancelled, their number
 * listed on their workspace's Do-Not-Call list before they were finished (a lead's final status is written once, with
 * its updatedAt). One query whatever the number of leads.
 */
export async function leadsEndedByOptOut(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    SELECT l.id::text FROM "Lead" l
      JOIN "DoNotCall" d ON d."workspaceId" = l."workspaceId" AND d.phone = l.phone
     WHERE l.id = ANY(${ids}::uuid[]) AND l.status = 'cancelled' AND d."createdAt" <= l."updatedAt"`;
  return new Set(rows.map((row) => row.id));
}

/**
 * The place in its campaign's line queue of each of these leads, in one query whatever the number of leads: 1 + the
 * entries of the same campaign not yet granted a line with a smaller seq. Each campaign's waiting entries are ranked
 * once, and only up to the deepest entry asked about (the index LineQueue(campaignId, seq)), so a lead near the head
 * costs little however long the queue. A lead whose entry was granted a line (it is about to dial) or is gone has no
 * place.
 */
export async function linePositionsOfLeads(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.$queryRaw<Array<{ leadId: string; position: number }>>`
    WITH asked AS (
      SELECT "leadId", "campaignId", seq FROM "LineQueue"
       WHERE "leadId" = ANY(${ids}::uuid[]) AND "grantedAt" IS NULL
    ), ranked AS (
      SELECT q.seq, row_number() OVER (PARTITION BY q."campaignId" ORDER BY q.seq) AS position
        FROM "LineQueue" q
        JOIN (SELECT "campaignId", max(seq) AS deepest FROM asked GROUP BY "campaignId") d
          ON d."campaignId" = q."campaignId" AND q.seq <= d.deepest
       WHERE q."grantedAt" IS NULL
    )
    SELECT a."leadId"::text AS "leadId", min(r.position)::int AS position
      FROM asked a JOIN ranked r ON r.seq = a.seq
     GROUP BY a."leadId"`;
  return new Map(rows.map((row) => [row.leadId, row.position]));
}

/** A journey's saved revision's definition. */
export async function revisionDefinitionRow(
  client: Client,
  journeyId: string,
  revision: number,
): Promise<JourneyDefinition | undefined> {
  const {
    rows: [row],
  } = await client.query<{ definition: JourneyDefinition }>(
    'SELECT definition FROM "WorkflowRevision" WHERE "workflowId" = $1::uuid AND revision = $2',
    [journeyId, revision],
  );
  return row?.definition;
}

/** A JOURNEY campaign's live cap and its journey's published revision, its row locked for the transaction. */
export async function lockJourneyCampaign(client: Client, campaignId: string) {
  const {
    rows: [locked],
  } = await client.query<{ maxLiveRuns: number; journeyId: string; publishedRevision: number | null }>(
    `SELECT c."maxLiveRuns", j.id AS "journeyId", j."publishedRevision" FROM "Campaign" c JOIN "Workflow" j ON j.id = c."workflowId"
      WHERE c.id = $1::uuid FOR UPDATE OF c`,
    [campaignId],
  );
  return locked;
}

/** The rows of the campaign's leads stored already under these keys. */
export async function storedLeadsOfKeys(
  client: Client,
  campaignId: string,
  keys: readonly string[],
): Promise<LeadRow[]> {
  const { rows } = await client.query<LeadRow>(
    `SELECT id, "idempotencyKey", "workflowId", "workflowStartedAt", false AS inserted FROM "Lead"
      WHERE "campaignId" = $1::uuid AND "idempotencyKey" = ANY($2::text[])`,
    [campaignId, keys],
  );
  return rows;
}

/** How many of the campaign's journey runs are live (running or needing recovery). */
export async function liveRunCount(client: Client, campaignId: string): Promise<number> {
  const {
    rows: [counted],
  } = await client.query<{ live: number }>(
    `SELECT count(*)::int AS live FROM "JourneyRun" WHERE "campaignId" = $1::uuid AND status = ANY($2::"JourneyRunStatus"[])`,
    [campaignId, LIVE_RUN_STATUSES],
  );
  return counted!.live;
}

/** Each of these pushed leads' run (whose id is the lead's), enrolled into the journey's revision. */
export async function insertPushedLeadRuns(
  client: Client,
  leadIds: readonly string[],
  journeyId: string,
  revision: number,
): Promise<void> {
  await client.query(
    `INSERT INTO "JourneyRun" (id, "workspaceId", "workflowId", revision, "campaignId", "leadId", "temporalWorkflowId", trigger, "startedBy", "updatedAt")
     SELECT l.id, l."workspaceId", $2::uuid, $3, l."campaignId", l.id, l."workflowId",
            jsonb_build_object('phone', l.phone, 'name', l.name, 'fields', l.fields), 'lead_push', now()
       FROM "Lead" l WHERE l.id = ANY($1::uuid[])`,
    [leadIds, journeyId, revision],
  );
}

const callSelect = {
  attempt: true,
  direction: true,
  status: true,
  outcome: true,
  durationMs: true,
  startedAt: true,
  endedAt: true,
  provider: true,
} as const;

/** What a lead's result shows of the lead: its calls, and its campaign's kind and channel. */
const leadInclude = {
  calls: { select: callSelect },
  campaign: { select: { kind: true, channel: true } },
} as const;

export type LeadWithCalls = Prisma.LeadGetPayload<{ include: typeof leadInclude }>;

export async function leadOfWorkspace(db: Db, workspaceId: string, leadId: string): Promise<LeadWithCalls | null> {
  return db.lead.findFirst({ where: { id: leadId, workspaceId }, include: leadInclude });
}

/** A page of the workspace's leads (of one campaign, when given), newest first, one more than the limit. */
export async function leadsOfWorkspacePage(
  db: Db,
  workspaceId: string,
  query: { limit: number; cursor?: CursorPosition; campaignId?: string },
): Promise<LeadWithCalls[]> {
  return db.lead.findMany({
    where: {
      workspaceId,
      ...(query.campaignId ? { campaignId: query.campaignId } : {}),
      ...afterCursor(query.cursor),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
    include: leadInclude,
  });
}

/** A page of the workspace's calls (of one campaign, when given), newest first, with the total. */
export async function callsOfWorkspacePage(
  db: Db,
  workspaceId: string,
  query: { limit: number; offset: number; campaignId?: string },
) {
  const where = { workspaceId, ...(query.campaignId ? { campaignId: query.campaignId } : {}) };
  const [rows, total] = await Promise.all([
    db.call.findMany({
      where,
      orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
      skip: query.offset,
      take: query.limit,
      include: { lead: { select: { phone: true } } },
    }),
    db.call.count({ where }),
  ]);
  return { rows, total };
}

/** A page of a campaign's leads, newest first, by offset, with the total. */
export async function leadsOfCampaignPage(db: Db, campaignId: string, query: { limit: number; offset: number }) {
  const where = { campaignId };
  const [rows, total] = await Promise.all([
    db.lead.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: query.offset,
      take: query.limit,
      include: leadInclude,
    }),
    db.lead.count({ where }),
  ]);
  return { rows, total };
}
