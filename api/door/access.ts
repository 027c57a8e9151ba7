import { ErrorCode } from '../../lib/error-codes';
import type { Plan } from '../../lib/door/workspace-admin';
import { Refusal, forbidden } from '../../lib/refusal';
import type { Principal } from './principal';

/**
 * What a route requires, declared next to its definition:
 * - public: no key at all (health, the OpenAPI description);
 * - keysRefused: the spec's "actions refused to keys": 403 api_key_not_allowed whatever the scopes;
 * - permission: the scope a key needs (the "Key needs" column where the spec makes keys stricter);
 *   null means any valid key. `requires` adds a plan tier or a workspace feature.
 */
export type RouteAccess =
  { public: true } | { keysRefused: true } | { permission: string | null; requires?: Entitlement };

export type Entitlement = { plan: Exclude<Plan, 'none'> } | { feature: 'workflows' | 'd2c' };

const PLAN_RANK: Record<Plan, number> = { none: 0, basic: 1, ai: 2 };

export function isPublicPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

export function authorize(access: RouteAccess, principal: Principal, path: string): void {
  if ('public' in access) return;
  if ('keysRefused' in access) throw new Refusal(ErrorCode.api_key_not_allowed);
  if (!principal.scoped) {
    if (!isPublicPath(path)) throw new Refusal(ErrorCode.api_key_not_scoped);
  } else if (access.permission && !principal.permissions.has(access.permission)) {
    throw forbidden(access.permission);
  }
  if (access.requires) assertEntitled(access.requires, principal);
}

/** One refusal for every gated endpoint: 403 plan_required or 403 feature_not_enabled, naming what is missing. */
function assertEntitled(requirement: Entitlement, principal: Principal): void {
  if ('plan' in requirement && PLAN_RANK[principal.plan] < PLAN_RANK[requirement.plan]) {
    throw new Refusal(ErrorCode.plan_required, { requiredPlan: requirement.plan });
  }
  if ('feature' in requirement && !principal.features.includes(requirement.feature)) {
    throw new Refusal(ErrorCode.feature_not_enabled, { requiredFeature: requirement.feature });
  }
}
