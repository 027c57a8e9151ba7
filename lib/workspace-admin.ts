import type { Database } from './database';
import type { Role } from './roles';
import { displayPrefixOf, generateApiKeySecret, hashApiKeySecret } from './api-key-secret';
import { holdableScopes } from './permissions';

export type Plan = 'none' | 'basic' | 'ai';
export type WorkspaceStatus = 'approved' | 'pending_approval' | 'suspended';
export type MemberStatus = 'active' | 'suspended' | 'removed';
export const FEATURES = ['workflows', 'd2c'] as const;

export class NotFoundError extends Error {}

export interface WorkspaceSettings {
  plan?: Plan;
  features?: string[];
  status?: WorkspaceStatus;
  rateLimitPerMinute?: number;
}

export async function createWorkspace(db: Database, name: string, settings: WorkspaceSettings) {
  const workspace = await db.workspace.create({ data: { name, ...settings }, select: { id: true } });
  return { id: workspace.id };
}

export async function updateWorkspace(db: Database, id: string, settings: WorkspaceSettings) {
  const { count } = await db.workspace.updateMany({ where: { id, deletedAt: null }, data: settings });
  if (count === 0) throw new NotFoundError(`workspace ${id} not found`);
  return { id };
}

export async function addMember(db: Database, workspaceId: string, email: string, role: Role) {
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  const member = await db.member.create({ data: { workspaceId, email, role }, select: { id: true } });
  return { id: member.id };
}

export async function updateMember(db: Database, id: string, changes: { role?: Role; status?: MemberStatus }) {
  const { count } = await db.member.updateMany({ where: { id }, data: changes });
  if (count === 0) throw new NotFoundError(`member ${id} not found`);
  return { id };
}

/**
 * Issues a key. `scopes` undefined makes a key without scopes; never-holdable scopes are dropped.
 * The secret is returned once and only its hash is stored.
 */
export async function createApiKey(
  db: Database,
  memberId: string,
  options: { scopes?: string[]; expiresAt?: Date } = {},
) {
  const member = await db.member.findUnique({ where: { id: memberId }, select: { workspaceId: true } });
  if (!member) throw new NotFoundError(`member ${memberId} not found`);
  const secret = generateApiKeySecret();
  const key = await db.apiKey.create({
    data: {
      workspaceId: member.workspaceId,
      memberId,
      displayPrefix: displayPrefixOf(secret),
      secretHash: hashApiKeySecret(secret),
      scoped: options.scopes !== undefined,
      scopes: holdableScopes(options.scopes ?? []),
      expiresAt: options.expiresAt ?? null,
    },
    select: { id: true, scopes: true },
  });
  return { id: key.id, key: secret, scopes: options.scopes === undefined ? null : key.scopes };
}

export async function revokeApiKey(db: Database, id: string) {
  const { count } = await db.apiKey.updateMany({ where: { id }, data: { revokedAt: new Date() } });
  if (count === 0) throw new NotFoundError(`key ${id} not found`);
  return { id };
}

/** Adds credits atomically and records the grant in the ledger. */
export async function grantCredits(db: Database, workspaceId: string, amount: number) {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ creditBalance: string }[]>`
      UPDATE "Workspace" SET "creditBalance" = "creditBalance" + ${amount}
      WHERE id = ${workspaceId}::uuid AND "deletedAt" IS NULL
      RETURNING "creditBalance"::text AS "creditBalance"`;
    const balance = rows[0]?.creditBalance;
    if (balance === undefined) throw new NotFoundError(`workspace ${workspaceId} not found`);
    await tx.creditLedgerEntry.create({
      data: { workspaceId, amount, balanceAfter: balance, reason: 'operator_grant' },
    });
    return { balance: Number(balance) };
  });
}
