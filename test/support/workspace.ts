import type { Database } from '../../lib/database';
import type { Role } from '../../lib/door/roles';
import { addMember, createApiKey, createWorkspace, type WorkspaceSettings } from '../../lib/door/workspace-admin';

export interface TestWorkspace {
  workspaceId: string;
  memberId: string;
  key: string;
  keyId: string;
}

/**
 * A workspace with one member and one key, built through the same functions the admin CLI uses. Its
 * rate limit is out of reach unless a test sets one: the limiter has tests of its own.
 */
export async function createTestWorkspace(
  db: Database,
  options: { role?: Role; scopes?: string[]; settings?: WorkspaceSettings } = {},
): Promise<TestWorkspace> {
  const { id: workspaceId } = await createWorkspace(db, `Test ${Math.random().toString(36).slice(2, 8)}`, {
    rateLimitPerMinute: 1_000_000,
    ...options.settings,
  });
  const { id: memberId } = await addMember(
    db,
    workspaceId,
    `owner-${workspaceId}@test.localhost`,
    options.role ?? 'owner',
  );
  const { id: keyId, key } = await createApiKey(db, memberId, { scopes: options.scopes });
  return { workspaceId, memberId, key, keyId };
}
