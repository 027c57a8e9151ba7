import { z } from 'zod';
import { normalizeE164 } from '../../lib/phone';
import { defineRoute } from '../http/route';
import { pushLead } from '../services/leads';

const e164Phone = z.string().transform((value, ctx) => {
  const normalized = normalizeE164(value);
  if (!normalized) {
    ctx.addIssue({ code: 'custom', message: 'phone must be a valid E.164 number, for example +14155550123' });
    return z.NEVER;
  }
  return normalized;
});

export const leadInputSchema = z.object({
  phone: e164Phone,
  name: z.string().max(200).optional(),
  fields: z.record(z.string(), z.unknown()).default({}),
});

const idempotencyKeySchema = z.string().min(1).max(255);

export const leadPushBodySchema = z.object({
  lead: leadInputSchema,
  idempotencyKey: idempotencyKeySchema,
});

export const leadPushResultSchema = z.object({
  leadId: z.string(),
  status: z.literal('queued'),
  deduplicated: z.boolean(),
  requestId: z.string().uuid(),
  resultUrl: z.string(),
  warnings: z.object({ undeclaredVariables: z.array(z.string()) }),
});

export const leadRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/campaigns/{campaignId}/leads',
    access: { permission: 'campaigns.edit' },
    summary: 'Push one lead into a standing API campaign. 202 when the lead is new, 200 when the idempotency key was seen before.',
    tags: ['Leads'],
    params: z.object({ campaignId: z.string() }),
    body: leadPushBodySchema,
    validationStatus: 422,
    responses: {
      202: { description: 'New lead queued.', schema: leadPushResultSchema },
      200: { description: 'Key seen before: the existing lead, no second dial.', schema: leadPushResultSchema },
    },
    handler: async ({ services, principal, params, body, requestId, req }) => {
      const { leadId, deduplicated } = await pushLead(services, principal, params.campaignId, body, requestId);
      return {
        status: deduplicated ? 200 : 202,
        body: {
          leadId,
          status: 'queued',
          deduplicated,
          requestId,
          resultUrl: `${req.protocol}://${req.get('host')}/v1/results/${leadId}`,
          warnings: { undeclaredVariables: [] },
        },
      };
    },
  }),
];
