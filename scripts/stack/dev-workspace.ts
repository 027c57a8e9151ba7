import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hashApiKeySecret } from '../../lib/door/api-key-secret';
import type { Database } from '../../lib/database';
import { HOLDABLE_SCOPES } from '../../lib/door/permissions';
import { addMember, createApiKey, createWorkspace } from '../../lib/door/workspace-admin';
import { newKeyringEntry } from '../../lib/secrets/keyring';
import { devApiKeyPath, devSecretsKeysPath } from './paths';

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

/**
 * The development key ring: SECRETS_KEYS when set, otherwise the one kept in the git-ignored .data/secrets-keys
 * (mode 600), made with a random key on the first start. Not a constant of the repository: a key everyone can read
 * would seal nothing, and a development database copied elsewhere would carry its secrets in the clear.
 */
export function ensureDevKeyring(env: NodeJS.ProcessEnv): string {
  if (env.SECRETS_KEYS) return env.SECRETS_KEYS;
  const saved = existsSync(devSecretsKeysPath) ? readFileSync(devSecretsKeysPath, 'utf8').trim() : '';
  if (saved) return saved;
  const made = newKeyringEntry(`dev-${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`);
  writeFileSync(devSecretsKeysPath, `${made}\n`, { mode: 0o600 });
  return made;
}
