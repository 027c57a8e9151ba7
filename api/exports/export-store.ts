import type { ExportJob, Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The exports API's SQL (docs/features/exports.md): the jobs of large exports. What they read is lib/exports/. */

type Db = AppServices['db'];

export async function insertExportJob(db: Db, data: Prisma.ExportJobUncheckedCreateInput): Promise<ExportJob> {
  return db.exportJob.create({ data });
}

/** A job whose workflow never started goes; failing to delete it is no failure (the caller is told to try again). */
export async function deleteUnstartedExportJob(db: Db, id: string): Promise<void> {
  await db.exportJob.delete({ where: { id } }).catch(() => undefined);
}

export async function exportJobOfCampaign(db: Db, campaignId: string, id: string): Promise<ExportJob | null> {
  return db.exportJob.findFirst({ where: { id, campaignId } });
}
