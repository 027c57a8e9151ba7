import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';

/** The one error body of the service: `error` is a code of lib/error-codes.ts, extras depend on it. */
export const errorBodySchema = z.object({
  error: z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]),
  issues: z.array(z.object({ path: z.array(z.string()), message: z.string(), code: z.string() })).optional()
    .describe('invalid_body: what failed validation.'),
  detail: z.string().optional().describe('internal_error on 400/413: why the body was refused.'),
  requiredPermission: z.string().optional().describe('forbidden: the scope the key lacks.'),
  requiredPlan: z.enum(['basic', 'ai']).optional().describe('plan_required: the plan tier the endpoint needs.'),
  requiredFeature: z.enum(['workflows', 'd2c']).optional().describe('feature_not_enabled: the workspace feature the endpoint needs.'),
  requestId: z.string().uuid().optional().describe('rate_limited: the id of the refused request (also in X-Request-Id).'),
  from: z.string().optional().describe('invalid_campaign_transition: the state the campaign is in.'),
  action: z.string().optional().describe('invalid_campaign_transition: the refused action.'),
  retryable: z.boolean().optional().describe('true: nothing was accepted; resend the same request later.'),
});
