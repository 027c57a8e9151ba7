import { Prisma, type PrismaClient } from '../../generated/prisma/client';
import { NOW_UTC } from '../sql-clock';

/*
 * A campaign's SQL around its transitions (activities/campaigns/campaigns.ts): its line queue and its queued leads as
 * its status changes, and the leads a stop cancelled. Each statement but the last runs in the transition's transaction.
 */

/**
 * The campaign's leads queued by their push and never handed a line, which have no workflow and are to get none, marked
 * settled without one (the lead outbox's UNDISPATCHED_LEAD_SQL then leaves them alone, and nothing wakes them).
 */
export async function settleLeadsQueuedByPush(tx: Prisma.TransactionClient, campaignId: string): Promise<void> {
  await tx.$executeRaw`UPDATE "Lead" l SET "settledWithoutWorkflowAt" = ${Prisma.raw(NOW_UTC)}
                         FROM "LineQueue" q WHERE q."campaignId" = ${campaignId}::uuid AND q."byPush"
                          AND q."grantedAt" IS NULL AND l.id = q."leadId" AND l."workflowStartedAt" IS NULL`;
}

/** Lines handed out and given back: the campaign's calls in flight counted down by as many (never below 0). */
export async function releaseCampaignLines(
  tx: Prisma.TransactionClient,
  campaignId: string,
  lines: number,
): Promise<void> {
  await tx.$executeRaw`UPDATE "Campaign" SET "callsInFlight" = greatest("callsInFlight" - ${lines}, 0) WHERE id = ${campaignId}::uuid`;
}

/** The lines handed to the campaign's queue and not yet used, taken back (the entries keep their places); how many. */
export async function takeBackGrantedLines(tx: Prisma.TransactionClient, campaignId: string): Promise<number> {
  return tx.$executeRaw`UPDATE "LineQueue" SET "grantedAt" = NULL, "wokenAt" = NULL
                         WHERE "campaignId" = ${campaignId}::uuid AND "grantedAt" IS NOT NULL`;
}

/** What the campaign's leads waiting in its line queue, without a line, wait for: a line, or the campaign. */
export async function markQueuedLeadsWaitingFor(
  tx: Prisma.TransactionClient,
  campaignId: string,
  waitingFor: 'line' | 'campaign',
): Promise<void> {
  await tx.$executeRaw`UPDATE "Lead" l SET "waitingFor" = ${waitingFor}
                         FROM "LineQueue" q WHERE q."campaignId" = ${campaignId}::uuid AND q."grantedAt" IS NULL AND l.id = q."leadId"`;
}

/**
 * A page of the leads a stop of the (CLASSIC, VOICE) campaign cancelled, in id order after `after`: each with its
 * workflow id and whether it was settled without a workflow (settleLeadsQueuedByPush).
 */
export async function stoppedLeadsPage(
  db: Pick<PrismaClient, '$queryRaw'>,
  campaignId: string,
  after: string,
  limit: number,
): Promise<Array<{ leadId: string; workflowId: string; settled: boolean }>> {
  return db.$queryRaw<Array<{ leadId: string; workflowId: string; settled: boolean }>>`
    SELECT l.id::text AS "leadId", l."workflowId", l."settledWithoutWorkflowAt" IS NOT NULL AS settled
      FROM "Lead" l JOIN "Campaign" c ON c.id = l."campaignId"
     WHERE l."campaignId" = ${campaignId}::uuid AND l.status = 'cancelled' AND c.kind = 'CLASSIC' AND c.channel = 'VOICE'
       AND l.id > ${after}::uuid
     ORDER BY l.id LIMIT ${limit}`;
}
