import type { Prisma, PrismaClient } from '../../generated/prisma/client';
import type { RunSql } from '../run-sql';
import { NOW_UTC } from '../sql-clock';

/*
 * The dial ladder's SQL (docs/features/dial-ladder.md): a lead's plan and its wait for its next rung, the campaign
 * carrier breaker's window and refusals, and a calling list's enrollment. The lines a lead's attempt takes and gives
 * back are in lib/calls/call-lines.ts.
 */

// The lean ladder's statements run on the database's pg pool (Database.sql), named so that each connection parses
// and plans them once: through Prisma's query layer they had been about a quarter of the worker's CPU per lead
// (docs/benchmarks/bare-ladder.md).

/** The lead's phone and its campaign's ladder and window as stored (null: the defaults); undefined: no such lead. */
export async function readLeadPlan(
  sql: RunSql,
  leadId: string,
): Promise<{ phone: string; dialLadder: unknown; callingWindow: unknown } | undefined> {
  const [lead] = await sql<{ phone: string; dialLadder: unknown; callingWindow: unknown }>(
    {
      name: 'lead_plan',
      text: `SELECT l.phone, c."dialLadder", c."callingWindow" FROM "Lead" l JOIN "Campaign" c ON c.id = l."campaignId" WHERE l.id = $1::uuid`,
    },
    leadId,
  );
  return lead;
}

/** The lead waits for its next rung, due at nextAttemptAt (ISO 8601). */
export async function markLeadWaitingForRung(sql: RunSql, leadId: string, nextAttemptAt: string): Promise<void> {
  await sql(
    {
      name: 'lead_waits_for_rung',
      text: `UPDATE "Lead" SET "waitingFor" = 'rung', "nextAttemptAt" = $2::timestamptz AT TIME ZONE 'UTC', "updatedAt" = ${NOW_UTC} WHERE id = $1::uuid`,
    },
    leadId,
    nextAttemptAt,
  );
}

/**
 * The campaign's attempts in the breaker's window, each counted once, and only those since the
 * campaign's last change (updatedAt: a resume, any transition or an edit), so that nothing from before
 * a resume counts again: its calls that ended within windowMs (a failure when its outcome is one of
 * failureOutcomes, or when a dial of it had been refused), plus its attempts refused within windowMs whose call
 * has not ended (a failure each, however often the retries of the attempt were refused). Undefined: no such campaign.
 */
export async function attemptsInBreakerWindow(
  sql: RunSql,
  campaignId: string,
  failureOutcomes: readonly string[],
  windowMs: number,
): Promise<{ status: string; calls: number; failures: number } | undefined> {
  const [row] = await sql<{ status: string; calls: number; failures: number }>(
    `WITH campaign AS (
       SELECT id, status::text AS status, "updatedAt" FROM "Campaign" WHERE id = $1::uuid
     ), refused AS (
       SELECT DISTINCT r."attemptId" FROM "CarrierDialRefusal" r, campaign c
        WHERE r."campaignId" = c.id AND r.at >= c."updatedAt"
          AND r.at >= ${NOW_UTC} - $3::int * interval '1 millisecond'
     ), attempts AS (
       SELECT k.outcome = ANY($2::text[]) OR k."attemptId" IN (SELECT "attemptId" FROM refused) AS failed
         FROM "Call" k, campaign c
        WHERE k."campaignId" = c.id AND k.status = 'ended' AND k."startedAt" >= c."updatedAt"
          AND k."endedAt" >= ${NOW_UTC} - $3::int * interval '1 millisecond'
       UNION ALL
       SELECT true FROM refused r
        WHERE NOT EXISTS (SELECT 1 FROM "Call" k WHERE k."attemptId" = r."attemptId" AND k.status = 'ended')
     )
     SELECT c.status,
            (SELECT count(*) FROM attempts)::int AS calls,
            (SELECT count(*) FROM attempts WHERE failed)::int AS failures
       FROM campaign c`,
    campaignId,
    failureOutcomes,
    windowMs,
  );
  return row;
}

/**
 * A dial of the campaign's attempt that the carrier refused, with the carrier's error. The campaign's refusals older
 * than windowMs, which the breaker no longer counts, go in the same statement: an outage leaves no more rows behind
 * than one window holds.
 */
export async function insertDialRefusal(
  db: Pick<PrismaClient, '$executeRawUnsafe'>,
  refusal: { campaignId: string; attemptId: string; error: string; windowMs: number },
): Promise<void> {
  await db.$executeRawUnsafe(
    `WITH expired AS (
       DELETE FROM "CarrierDialRefusal"
        WHERE "campaignId" = $1::uuid AND at < ${NOW_UTC} - $4::int * interval '1 millisecond'
     )
     INSERT INTO "CarrierDialRefusal" (id, "campaignId", "attemptId", error, at)
     VALUES (gen_random_uuid(), $1::uuid, $2, $3, ${NOW_UTC})`,
    refusal.campaignId,
    refusal.attemptId,
    refusal.error,
    refusal.windowMs,
  );
}

// A calling list's enrollment (activities/dial-ladder/enrollment.ts): each statement runs in the enrollment's
// transaction, which holds the campaign row FOR UPDATE from the first.

export interface EnrollingCampaign {
  status: string;
  kind: 'CLASSIC' | 'JOURNEY';
  channel: string;
  maxConcurrentCalls: number;
  workspaceId: string;
}

/** The campaign, locked for the transaction; undefined: no such campaign. */
export async function lockEnrollingCampaign(
  tx: Prisma.TransactionClient,
  campaignId: string,
): Promise<EnrollingCampaign | undefined> {
  const [campaign] = await tx.$queryRaw<EnrollingCampaign[]>`
    SELECT status::text, kind::text AS kind, channel::text AS channel, "maxConcurrentCalls", "workspaceId" FROM "Campaign" WHERE id = ${campaignId}::uuid FOR UPDATE`;
  return campaign;
}

/** The campaign's contacts not enrolled yet. */
export async function countUnenrolledContacts(tx: Prisma.TransactionClient, campaignId: string): Promise<number> {
  const [{ remaining }] = await tx.$queryRaw<[{ remaining: number }]>`
    SELECT count(*)::int AS remaining FROM "CampaignContact" WHERE "campaignId" = ${campaignId}::uuid AND "enrolledAt" IS NULL`;
  return remaining;
}

/** The campaign's leads enrolled from its list and not dialed yet. */
export async function countFreshContactLeads(tx: Prisma.TransactionClient, campaignId: string): Promise<number> {
  const [{ fresh }] = await tx.$queryRaw<[{ fresh: number }]>`
    SELECT count(*)::int AS fresh FROM "Lead" l
     WHERE l."campaignId" = ${campaignId}::uuid AND l."contactId" IS NOT NULL AND l.status = 'queued'
       AND NOT EXISTS (SELECT 1 FROM "Call" c WHERE c."leadId" = l.id)`;
  return fresh;
}

/** The next contacts of the list not enrolled yet, in its order, locked for the transaction. */
export async function nextUnenrolledContacts(
  tx: Prisma.TransactionClient,
  campaignId: string,
  limit: number,
): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ contactId: string }>>`
    SELECT "contactId" FROM "CampaignContact"
     WHERE "campaignId" = ${campaignId}::uuid AND "enrolledAt" IS NULL
     ORDER BY position LIMIT ${limit}
     FOR UPDATE`;
  return rows.map((row) => row.contactId);
}

/**
 * The contacts marked enrolled and made leads, each with its key and workflow id (contactIds, keys and workflowIds
 * in the same order); a lead whose key the campaign has already is not made again. Answers the leads made.
 */
export async function insertContactLeads(
  tx: Prisma.TransactionClient,
  {
    campaignId,
    workspaceId,
    contactIds,
    keys,
    workflowIds,
  }: { campaignId: string; workspaceId: string; contactIds: string[]; keys: string[]; workflowIds: string[] },
): Promise<Array<{ id: string; workflowId: string }>> {
  return tx.$queryRaw<Array<{ id: string; workflowId: string }>>`
    WITH marked AS (
      UPDATE "CampaignContact" SET "enrolledAt" = now()
       WHERE "campaignId" = ${campaignId}::uuid AND "contactId" = ANY(${contactIds}::uuid[])
    )
    INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "contactId", "updatedAt")
    SELECT gen_random_uuid(), ${workspaceId}::uuid, ${campaignId}::uuid, next.key, c.phone, c.name, c.metadata, next.workflow_id,
           gen_random_uuid(), c.id, now()
      FROM unnest(${contactIds}::uuid[], ${keys}::text[], ${workflowIds}::text[]) WITH ORDINALITY AS next(contact_id, key, workflow_id, position)
      JOIN "Contact" c ON c.id = next.contact_id
     ORDER BY next.position
    ON CONFLICT ("campaignId", "idempotencyKey") DO NOTHING
    RETURNING id, "workflowId"`;
}
