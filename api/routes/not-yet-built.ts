import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import type { Entitlement } from '../auth/access';
import { ApiError } from '../http/api-error';
import { defineRoute, type HttpMethod, type RouteDefinition } from '../http/route';
import { findOwnedCampaign } from '../services/campaigns';
import { campaignParamOf } from '../services/api-logs';

/**
 * Endpoints of the spec whose behaviour is not built yet. They exist so that the door holds for every
 * endpoint of the interface (keys, scopes, plan tiers, workspaces, rate limits); past the door they
 * answer 501 not_implemented. A campaign in the path is checked first: another workspace's campaign
 * gets 403 forbidden here exactly as on the built endpoints.
 */
const NOT_YET_BUILT: Array<[HttpMethod, string, string, Entitlement?]> = [];

export const notYetBuiltRoutes: RouteDefinition[] = NOT_YET_BUILT.map(([method, path, permission, requires]) => {
  const campaignParam = campaignParamOf(path);
  return defineRoute({
    method,
    path,
    access: { permission, requires },
    summary:
      'Not built yet: answers 501 not_implemented once the request has passed authentication, scopes, entitlements and workspace checks.',
    tags: ['Not yet built'],
    params: campaignParam ? z.object({ [campaignParam]: z.string() }) : undefined,
    errors: { 501: [ErrorCode.not_implemented] },
    handler: async ({ services, principal, params }) => {
      if (campaignParam)
        await findOwnedCampaign(services, principal, (params as Record<string, string>)[campaignParam]!);
      throw new ApiError(501, ErrorCode.not_implemented);
    },
  });
});
