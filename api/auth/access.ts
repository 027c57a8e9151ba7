import { ErrorCode } from '../../lib/error-codes';
import { ApiError, forbidden } from '../http/api-error';
import type { Principal } from './principal';

/**
 * What a route requires, declared next to its definition:
 * - public: no key at all (health, the OpenAPI description);
 * - keysRefused: the spec's "actions refused to keys": 403 api_key_not_allowed whatever the scopes;
 * - permission: the scope a key needs (the "Key needs" column where the spec makes keys stricter);
 *   null means any valid key.
 */
export type RouteAccess =
  | { public: true }
  | { keysRefused: true }
  | { permission: string | null };

export function authorize(access: RouteAccess, principal: Principal, path: string): void {
  if ('keysRefused' in access) throw new ApiError(403, ErrorCode.api_key_not_allowed);
  if ('public' in access) return;
  const publicApi = path === '/v1' || path.startsWith('/v1/');
  if (!principal.scoped) {
    if (publicApi) return;
    throw new ApiError(403, ErrorCode.api_key_not_scoped);
  }
  if (access.permission && !principal.permissions.has(access.permission)) throw forbidden(access.permission);
}
