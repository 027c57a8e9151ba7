import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { leadFieldsSchema } from '../../lib/campaigns/lead-fields';
import { e164PhoneSchema } from '../../lib/phone';
import { Refusal } from '../../lib/refusal';
import { ApiError } from '../http/api-error';
import { defineRoute } from '../http/route';
import { admitLeads, campaignAcceptingLeads, type Admission } from './leads';

export const leadInputSchema = z.object({
  phone: e164PhoneSchema,
  name: z.string().check(atMostCodePoints(200)).optional(),
  fields: leadFieldsSchema.default({}),
});

const idempotencyKeySchema = z
  .string()
  .min(1)
  .check(atMostCodePoints(255))
  .describe('The only deduplication key: the same key never dials twice; a new key dials the same phone again.');

export const leadPushBodySchema = z.object({
  lead: leadInputSchema,
  idempotencyKey: idempotencyKeySchema
    .optional()
    .describe('Required here or in the Idempotency-Key header. When both are given they must be equal.'),
});

const batchLeadSchema = z.object({ lead: leadInputSchema, idempotencyKey: idempotencyKeySchema });
const batchBodySchema = z.object({
  leads: z
    .array(z.unknown())
    .min(1)
    .max(100)
    .describe('1 to 100 items, each of the single-push shape with its own idempotencyKey.'),
});

const warningsSchema = z.object({
  undeclaredVariables: z
    .array(z.string())
    .describe(
      "JOURNEY: the lead's field names that the published workflow graph never reads (the lead is still queued). CLASSIC: always empty.",
    ),
});

export const leadPushResultSchema = z.object({
  leadId: z.string(),
  status: z.literal('queued'),
  deduplicated: z.boolean(),
  requestId: z.string().uuid(),
  resultUrl: z.string(),
  warnings: warningsSchema,
});

const batchResultSchema = z.object({
  requestId: z.string().uuid(),
  summary: z.object({ queued: z.number().int(), duplicate: z.number().int(), rejected: z.number().int() }),
  results: z.array(
    z.object({
      index: z.number().int(),
      status: z.enum(['queued', 'duplicate', 'rejected']),
      requestId: z.string().uuid(),
      idempotencyKey: z.string().nullable(),
      phone: z.string().nullable(),
      leadId: z.string().nullable(),
      resultUrl: z.string().nullable(),
      warnings: warningsSchema,
      error: z
        .string()
        .nullable()
        .describe(
          'rejected: invalid_body (the lead failed validation, or lacks a field the journey requires), journey_live_cap_reached (JOURNEY: the campaign has maxLiveRuns runs alive; retryable), or database_unavailable / internal_error (the lead could not be stored; retryable).',
        ),
      reason: z.string().nullable().describe('rejected: validation_failed, live_cap or lead_not_stored.'),
      issues: z.array(z.unknown()),
      retryable: z
        .boolean()
        .describe('true: nothing was accepted; resend the lead later with the same idempotencyKey.'),
    }),
  ),
});

const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  description: "The idempotency key of a single push, instead of (or equal to) the body's idempotencyKey.",
};

function resultUrl(req: Request, leadId: string): string {
  return `${req.protocol}://${req.get('host')}/v1/results/${leadId}`;
}

function invalid(path: string, message: string) {
  return new z.ZodError([{ code: 'custom', path: [path], message, input: undefined }]);
}

export const leadRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/campaigns/{campaignId}/leads',
    access: { permission: 'campaigns.edit' },
    summary:
      "Push one lead into a standing API campaign (CLASSIC: dialed on the ladder; JOURNEY: enrolled into a run of the workflow's published revision). 202 when the lead is new, 200 when its idempotency key was accepted before (deduplicated, no second dial). JOURNEY over the live cap: 429 journey_live_cap_reached with retryable true; no published revision: 409 workflow_not_published.",
    tags: ['Leads'],
    params: z.object({ campaignId: z.string() }),
    body: leadPushBodySchema,
    headerParameters: [IDEMPOTENCY_HEADER],
    validationStatus: 422,
    responses: {
      202: { description: 'New lead queued.', schema: leadPushResultSchema },
      200: { description: 'Key seen before: the existing lead, no second dial.', schema: leadPushResultSchema },
    },
    errors: {
      403: [ErrorCode.api_key_not_allowed],
      409: [ErrorCode.campaign_not_accepting_leads, ErrorCode.workflow_not_published],
      429: [ErrorCode.journey_live_cap_reached],
      503: [ErrorCode.internal_error],
    },
    handler: async ({ services, principal, params, body, requestId, req }) => {
      const header = req.get('idempotency-key');
      if (header !== undefined && body.idempotencyKey !== undefined && header !== body.idempotencyKey) {
        throw invalid('idempotencyKey', 'differs from the Idempotency-Key header');
      }
      const idempotencyKey = body.idempotencyKey ?? idempotencyKeySchema.safeParse(header).data;
      if (!idempotencyKey)
        throw invalid('idempotencyKey', 'required, in the body or the Idempotency-Key header (1 to 255 characters)');
      const campaign = await campaignAcceptingLeads(services, principal, params.campaignId);
      const [admission] = await admitLeads(
        services,
        principal,
        campaign,
        [{ lead: body.lead, idempotencyKey }],
        requestId,
      );
      if (admission!.outcome === 'invalid') throw new Refusal(ErrorCode.invalid_body, { issues: admission!.issues });
      if (admission!.outcome === 'rejected') throw retryableRejection(admission!);
      const deduplicated = admission!.outcome === 'duplicate';
      return {
        status: deduplicated ? 200 : 202,
        body: {
          leadId: admission!.leadId,
          status: 'queued',
          deduplicated,
          requestId,
          resultUrl: resultUrl(req, admission!.leadId),
          warnings: { undeclaredVariables: admission!.undeclaredVariables },
        },
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/campaigns/{campaignId}/leads/batch',
    access: { permission: 'campaigns.edit' },
    summary:
      'Push 1 to 100 leads. Campaign-level problems refuse the whole batch; a bad lead is rejected in its own result. Counts as one request against the rate limit.',
    tags: ['Leads'],
    params: z.object({ campaignId: z.string() }),
    body: batchBodySchema,
    responses: { 200: { description: 'One result per lead, in request order.', schema: batchResultSchema } },
    errors: {
      403: [ErrorCode.api_key_not_allowed],
      409: [ErrorCode.campaign_not_accepting_leads, ErrorCode.workflow_not_published],
    },
    handler: async ({ services, principal, params, body, requestId, req }) => {
      if (req.get('idempotency-key') !== undefined)
        throw invalid('Idempotency-Key', 'not accepted on a batch: give each lead its idempotencyKey');
      const campaign = await campaignAcceptingLeads(services, principal, params.campaignId);
      const parsed = body.leads.map((item) => batchLeadSchema.safeParse(item));
      const valid = parsed.flatMap((result, index) => (result.success ? [{ ...result.data, index }] : []));
      const admissions = await admitLeads(services, principal, campaign, valid, requestId);
      const admissionByIndex = new Map(valid.map((item, position) => [item.index, admissions[position]!]));
      const results = parsed.map((result, index) => {
        const item = body.leads[index] as { idempotencyKey?: unknown; lead?: { phone?: unknown } } | null;
        const base = {
          index,
          requestId,
          idempotencyKey: typeof item?.idempotencyKey === 'string' ? item.idempotencyKey : null,
          phone: result.success
            ? result.data.lead.phone
            : typeof item?.lead?.phone === 'string'
              ? item.lead.phone
              : null,
          warnings: { undeclaredVariables: [] as string[] },
        };
        if (!result.success) {
          return {
            ...base,
            status: 'rejected' as const,
            leadId: null,
            resultUrl: null,
            error: ErrorCode.invalid_body,
            reason: 'validation_failed',
            issues: result.error.issues.map(({ path, message, code }) => ({ path: path.map(String), message, code })),
            retryable: false,
          };
        }
        const admission: Admission = admissionByIndex.get(index)!;
        switch (admission.outcome) {
          case 'invalid':
            return {
              ...base,
              status: 'rejected' as const,
              leadId: null,
              resultUrl: null,
              error: ErrorCode.invalid_body,
              reason: 'validation_failed',
              issues: admission.issues,
              retryable: false,
            };
          case 'rejected':
            return {
              ...base,
              status: 'rejected' as const,
              leadId: null,
              resultUrl: null,
              error: admission.error,
              reason: admission.reason,
              issues: [],
              retryable: true,
            };
          case 'queued':
          case 'duplicate':
            return {
              ...base,
              status: admission.outcome,
              leadId: admission.leadId,
              resultUrl: resultUrl(req, admission.leadId),
              warnings: { undeclaredVariables: admission.undeclaredVariables },
              error: null,
              reason: null,
              issues: [],
              retryable: false,
            };
        }
      });
      const count = (status: string) => results.filter((result) => result.status === status).length;
      return {
        status: 200,
        body: {
          requestId,
          summary: { queued: count('queued'), duplicate: count('duplicate'), rejected: count('rejected') },
          results,
        },
      };
    },
  }),
];

/**
 * A lead not accepted now but to be resent with the same key: over a journey's live cap (429), or not stored.
 * Not stored is this route's own answer, 503 whatever the cause (the spec's retryable lead): internal_error
 * is answered 503 here, not 500.
 */
function retryableRejection(admission: Extract<Admission, { outcome: 'rejected' }>) {
  if (admission.error === ErrorCode.journey_live_cap_reached)
    return new Refusal(admission.error, { retryable: true }, { retryAfterSeconds: 30 });
  return new ApiError(503, admission.error, { retryable: true }, { 'Retry-After': '5' });
}
