import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hashApiKeySecret } from '../../lib/door/api-key-secret';
import type { Database } from '../../lib/database';
import { HOLDABLE_SCOPES } from '../../lib/door/permissions';
import { addMember, createApiKey, createWorkspace } from '../../lib/door/workspace-admin';
import { devApiKeyPath } from './paths';

const DEV_WORKSPACE_NAME = 'Development workspace';
const DEV_OWNER_EMAIL = 'owner@dev.localhost';

/**
 * Makes sure the development workspace, its owner and a key exist. The key's secret lives only in
 * the git-ignored .data/dev-api-key (mode 600) on this machine; the database holds its hash.
 */
export async function ensureDevWorkspace(db: Database): Promise<{ workspaceId: string; apiKey: string }> {
  const existing = await db.workspace.findFirst({
    where: { name: DEV_WORKSPACE_NAME, deletedAt: null },
    select: { id: true, members: { where: { email: DEV_OWNER_EMAIL }, select: { id: true } } },
  });
  const workspaceId =
    existing?.id ?? (await createWorkspace(db, DEV_WORKSPACE_NAME, { plan: 'ai', features: ['workflows', 'd2c'] })).id;
  const ownerId = existing?.members[0]?.id ?? (await addMember(db, workspaceId, DEV_OWNER_EMAIL, 'owner')).id;

  const saved = existsSync(devApiKeyPath) ? readFileSync(devApiKeyPath, 'utf8').trim() : '';
  if (saved) {
    const usable = await db.apiKey.findFirst({
      where: { secretHash: hashApiKeySecret(saved), memberId: ownerId, revokedAt: null },
      select: { id: true },
    });
    if (usable) return { workspaceId, apiKey: saved };
  }
  const { key } = await createApiKey(db, ownerId, { scopes: [...HOLDABLE_SCOPES] });
  writeFileSync(devApiKeyPath, `${key}\n`, { mode: 0o600 });
  return { workspaceId, apiKey: key };
}
