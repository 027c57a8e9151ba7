import type { LiveSheet, Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The live sheets API's SQL (docs/features/sheets.md): a campaign's one sheet. */

type Db = AppServices['db'];

export async function sheetOfCampaign(db: Db, campaignId: string): Promise<LiveSheet | null> {
  return db.liveSheet.findUnique({ where: { campaignId } });
}

/** A second sheet of the campaign is a unique violation (P2002). */
export async function insertSheet(db: Db, data: Prisma.LiveSheetUncheckedCreateInput): Promise<LiveSheet> {
  return db.liveSheet.create({ data });
}

export async function updateSheetSettings(
  db: Db,
  id: string,
  data: Prisma.LiveSheetUncheckedUpdateInput,
): Promise<LiveSheet> {
  return db.liveSheet.update({ where: { id }, data });
}

/** Its rows' positions go with it. */
export async function deleteSheetRow(db: Db, id: string): Promise<void> {
  await db.liveSheet.delete({ where: { id } });
}
