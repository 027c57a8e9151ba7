import type { AppServices } from '../app-services';

/**
 * The compliance API's SQL (docs/features/compliance.md): the workspace's settings as the API reads and replaces them.
 * What calls read of them is lib/compliance/compliance-store.ts.
 */

type Db = AppServices['db'];

export async function complianceSettingsOf(db: Db, workspaceId: string) {
  return db.complianceSettings.findUnique({ where: { workspaceId } });
}

export async function upsertComplianceSettings(
  db: Db,
  workspaceId: string,
  data: {
    disclosure: string | null;
    redactions: string[];
    recordingEnabled: boolean;
    recordingRetentionDays: number | null;
  },
) {
  return db.complianceSettings.upsert({
    where: { workspaceId },
    create: { workspaceId, ...data },
    update: data,
  });
}
