import type { Request, Response } from 'express';
import { hashApiKeySecret } from '../../lib/door/api-key-secret';
import type { SqlPool } from '../../lib/sql-pool';
import { ErrorCode } from '../../lib/error-codes';
import { isHoldableScope, withIncludedPermissions } from '../../lib/door/permissions';
import { ROLE_PERMISSIONS } from '../../lib/door/roles';
import { Refusal } from '../../lib/refusal';
import type { Principal } from './principal';
import { admitKey } from './door-store';
import {
  FAILED_AUTH_LIMIT_PER_IP,
  RATE_LIMIT_WINDOW_MS,
  rateLimitStateOf,
  setRateLimitHeaders,
  takeFromBucket,
  rateLimited,
} from './rate-limit';

const BEARER = /^Bearer[ \t]+(.*)$/i;

/**
 * The door of every authenticated request. One round trip reads the key, its member and workspace as
 * they are now (revoking a key or narrowing a role takes effect from the next request) and takes the
 * request from the key's rolling-window bucket, shared by every API process.
 */
export async function authenticate(
  sql: SqlPool,
  req: Request,
  res: Response,
  defaultLimit: number,
): Promise<Principal> {
  const secret = BEARER.exec(req.get('authorization') ?? '')?.[1]?.trim();
  if (!secret) return failAuthentication(sql, req, res, ErrorCode.unauthorized);
  const row = await admitKey(sql, hashApiKeySecret(secret), defaultLimit, RATE_LIMIT_WINDOW_MS);
  if (!row) return failAuthentication(sql, req, res, ErrorCode.invalid_api_key);
  const rate = rateLimitStateOf(row.rate_limit, row);
  setRateLimitHeaders(res, rate);
  if (!rate.allowed) throw rateLimited(res, rate);
  if (row.member_status !== 'active') throw new Refusal(ErrorCode.api_key_owner_inactive);
  if (row.workspace_status === 'pending_approval') throw new Refusal(ErrorCode.workspace_pending_approval);
  if (row.workspace_status !== 'approved') throw new Refusal(ErrorCode.workspace_suspended);

  const rolePermissions = ROLE_PERMISSIONS[row.member_role];
  return {
    keyId: row.key_id,
    workspaceId: row.workspace_id,
    memberId: row.member_id,
    scoped: row.scoped,
    // Never-holdable scopes are dropped at issue time; filtering again means a row written any other way
    // still cannot grant them (or what they include).
    permissions: new Set(
      [...withIncludedPermissions(row.scopes.filter(isHoldableScope))].filter((scope) => rolePermissions.has(scope)),
    ),
    plan: row.plan,
    features: row.features,
  };
}

/** A failed authentication counts against the client's address; past the limit it gets 429. */
async function failAuthentication(sql: SqlPool, req: Request, res: Response, code: ErrorCode): Promise<never> {
  const rate = await takeFromBucket(sql, res, `ip:${req.ip ?? 'unknown'}`, FAILED_AUTH_LIMIT_PER_IP);
  if (!rate.allowed) throw rateLimited(res, rate);
  throw new Refusal(code);
}
