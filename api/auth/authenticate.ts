import type { Request } from 'express';
import { hashApiKeySecret } from '../../lib/api-key-secret';
import type { Database } from '../../lib/database';
import { ErrorCode } from '../../lib/error-codes';
import { withIncludedPermissions } from '../../lib/permissions';
import { ROLE_PERMISSIONS } from '../../lib/roles';
import { ApiError } from '../http/api-error';
import type { Principal } from './principal';

const BEARER = /^Bearer[ \t]+(.*)$/i;

/**
 * Resolves the bearer key on every request: role, member and workspace state are read fresh, so
 * revoking a key or narrowing a role takes effect from the next request.
 */
export async function authenticate(db: Database, req: Request): Promise<Principal> {
  const secret = BEARER.exec(req.get('authorization') ?? '')?.[1]?.trim();
  if (!secret) throw new ApiError(401, ErrorCode.unauthorized);
  const key = await db.apiKey.findUnique({
    where: { secretHash: hashApiKeySecret(secret) },
    select: {
      id: true, scoped: true, scopes: true, expiresAt: true, revokedAt: true,
      member: { select: { id: true, role: true, status: true } },
      workspace: { select: { id: true, status: true, deletedAt: true, rateLimitPerMinute: true } },
    },
  });
  const now = Date.now();
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= now) || key.workspace.deletedAt) {
    throw new ApiError(401, ErrorCode.invalid_api_key);
  }
  if (key.member.status !== 'active') throw new ApiError(403, ErrorCode.api_key_owner_inactive);
  if (key.workspace.status === 'pending_approval') throw new ApiError(403, ErrorCode.workspace_pending_approval);
  if (key.workspace.status === 'suspended') throw new ApiError(403, ErrorCode.workspace_suspended);
  const rolePermissions = ROLE_PERMISSIONS[key.member.role];
  const permissions = new Set([...withIncludedPermissions(key.scopes)].filter((scope) => rolePermissions.has(scope)));
  return {
    keyId: key.id,
    workspaceId: key.workspace.id,
    memberId: key.member.id,
    scoped: key.scoped,
    permissions,
    rateLimitPerMinute: key.workspace.rateLimitPerMinute,
  };
}
