import { randomUUID } from 'node:crypto';
import type { Database } from '../database';
import { CreditWorkspaceNotFoundError } from '../credits/credit-errors';
import { NotFoundError } from '../operator-refusals';
import { credit } from '../credits/debit';
import { prismaCreditStore } from '../credits/ledger-store';
import { CREDIT_SCALE, creditString } from '../credits/money';
import type { Role } from './roles';
import { displayPrefixOf, generateApiKeySecret, hashApiKeySecret } from './api-key-secret';
import { holdableScopes } from './permissions';

export type Plan = 'none' | 'basic' | 'ai';
export type WorkspaceStatus = 'approved' | 'pending_approval' | 'suspended';
export type MemberStatus = 'active' | 'suspended' | 'removed';
export const FEATURES = ['workflows', 'd2c'] as const;

export interface WorkspaceSettings {
  plan?: Plan;
  features?: string[];
  status?: WorkspaceStatus;
  rateLimitPerMinute?: number;
  /** Questions one campaign conversation may hold (docs/features/chat.md); unset: the service default. */
  chatMessageCap?: number;
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

/**
 * Adds credits as a grant entry of the ledger (lib/credits), actor operator. Amounts are kept to 4
 * decimals, as the balance is. Each call is a grant of its own unless an idempotency key is given.
 */
export async function grantCredits(
  db: Database,
  workspaceId: string,
  amount: number,
  options: { idempotencyKey?: string } = {},
) {
  try {
    const { entry } = await credit(prismaCreditStore(db), {
      workspaceId,
      kind: 'grant',
      amount: creditString(Math.round(amount * CREDIT_SCALE)),
      reference: null,
      actor: { type: 'operator' },
      idempotencyKey: options.idempotencyKey ?? `grant:${randomUUID()}`,
    });
    return { balance: Number(entry.balanceAfter) };
  } catch (error) {
    if (error instanceof CreditWorkspaceNotFoundError) throw new NotFoundError(`workspace ${workspaceId} not found`);
    throw error;
  }
}
