import type { Campaign, Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The campaigns' SQL (docs/features/campaigns.md): the campaign rows, and what their settings name. */

type Db = AppServices['db'];

/**
 * A campaign of this workspace, not deleted, or undefined. A prepared statement on the plain pool: every lead push
 * reads its campaign (measured in bench/leads.ts).
 */
export async function ownedCampaignRow(
  sql: AppServices['sql'],
  workspaceId: string,
  id: string,
): Promise<Campaign | undefined> {
  return (
    await sql.query<Campaign>({
      name: 'find_owned_campaign',
      // Prisma's field names: the column "workflowId" (the API's name) is the field journeyId.
      text: 'SELECT c.*, c."workflowId" AS "journeyId" FROM "Campaign" c WHERE c.id = $1::uuid AND c."workspaceId" = $2::uuid AND c."deletedAt" IS NULL',
      values: [id, workspaceId],
    })
  ).rows[0];
}

export async function campaignsOfWorkspace(db: Db, workspaceId: string): Promise<Campaign[]> {
  return db.campaign.findMany({
    where: { workspaceId, deletedAt: null },
    orderBy: { createdAt: 'desc' },
  });
}

export async function campaignRow(db: Db, id: string): Promise<Campaign> {
  return db.campaign.findUniqueOrThrow({ where: { id } });
}

export async function insertCampaign(tx: Prisma.TransactionClient, data: Prisma.CampaignUncheckedCreateInput) {
  return tx.campaign.create({ data });
}

export async function updateCampaignRow(
  tx: Prisma.TransactionClient,
  id: string,
  data: Prisma.CampaignUncheckedUpdateInput,
) {
  return tx.campaign.update({ where: { id }, data });
}

/** The campaign is hidden, and its calling list goes with it. */
export async function hideCampaign(db: Db, id: string): Promise<void> {
  await db.$transaction([
    db.campaignContact.deleteMany({ where: { campaignId: id } }),
    db.campaign.update({ where: { id }, data: { deletedAt: new Date() } }),
  ]);
}

/** The id of this workspace's journey, or null. */
export async function journeyIdOfWorkspace(db: Db, workspaceId: string, journeyId: string) {
  return db.journey.findFirst({ where: { id: journeyId, workspaceId }, select: { id: true } });
}

/** Which of these numbers the workspace holds, with their capabilities. */
export async function phoneNumbersOfWorkspace(db: Db, workspaceId: string, e164s: readonly string[]) {
  return db.phoneNumber.findMany({
    where: { workspaceId, e164: { in: [...e164s] } },
    select: { e164: true, capabilities: true },
  });
}

/** Creations of one kind by one holder take turns on this transaction-scoped advisory lock. */
export async function lockQuota(tx: Prisma.TransactionClient, key: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
}
