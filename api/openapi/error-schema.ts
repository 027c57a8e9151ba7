import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';

const issueSchema = z.strictObject({ path: z.array(z.string()), message: z.string(), code: z.string() });

/**
 * The one error body of the service: `error` is a code of lib/error-codes.ts, extras depend on it. Strict:
 * an extra member no code documents is drift, caught by the tests (test/support/response-check.ts) and the fuzzer.
 */
export const errorBodySchema = z.strictObject({
  error: z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]),
  issues: z
    .array(issueSchema)
    .optional()
    .describe('invalid_body: what failed validation, each with the path of the field (empty: the body itself).'),
  detail: z
    .string()
    .optional()
    .describe(
      'internal_error on 400/413: why the body was refused; otherwise, where given, what happened or what to do.',
    ),
  details: z
    .array(z.string())
    .optional()
    .describe('workflow_invalid: one message per problem of the graph, naming the node.'),
  requiredPermission: z.string().optional().describe('forbidden: the scope the key lacks.'),
  requiredPlan: z.enum(['basic', 'ai']).optional().describe('plan_required: the plan tier the endpoint needs.'),
  requiredFeature: z
    .enum(['workflows', 'd2c'])
    .optional()
    .describe('feature_not_enabled: the workspace feature the endpoint needs.'),
  requestId: z
    .string()
    .uuid()
    .optional()
    .describe('rate_limited: the id of the refused request (also in X-Request-Id).'),
  from: z.string().optional().describe('invalid_campaign_transition: the state the campaign is in.'),
  action: z.string().optional().describe('invalid_campaign_transition: the refused action.'),
  status: z
    .string()
    .optional()
    .describe(
      "campaign_not_draft: the campaign's state; run_not_running / run_not_awaiting_decision: the run's; export_not_ready: the job's; recording_not_ready: the recording's (starting, in-progress).",
    ),
  percent: z.number().int().optional().describe('export_not_ready: how much of the file is written (0 to 100).'),
  reason: z.string().nullable().optional().describe('export_failed: why the job failed.'),
  expiresAt: z.string().nullable().optional().describe('export_expired: when the file was deleted.'),
  deletedAt: z
    .string()
    .nullable()
    .optional()
    .describe('recording_deleted: when the recording was deleted; null when the carrier no longer had it.'),
  upstreamStatus: z
    .number()
    .int()
    .optional()
    .describe(
      'provider_error: how the provider failed, as an HTTP status: 4xx it refused the request, 5xx it was unavailable (speech synthesiser, translator: 503 cannot be run, 500 failed, 504 too slow; WhatsApp provider: the status it answered, 503 when it could not be reached).',
    ),
  pairs: z
    .array(z.strictObject({ from: z.string(), to: z.string() }))
    .optional()
    .describe(
      'translation_pair_unsupported: the language pairs installed (BCP 47 tags), read from the installed data.',
    ),
  retryable: z.boolean().optional().describe('true: nothing was accepted; resend the same request later.'),
  campaignIds: z
    .array(z.string())
    .optional()
    .describe('agent_in_use: the RUNNING or PAUSED campaigns that use the agent (empty when none does).'),
  phoneNumberIds: z
    .array(z.string())
    .optional()
    .describe('agent_in_use: the phone numbers that route inbound calls to the agent (empty when none does).'),
  agentId: z
    .string()
    .optional()
    .describe("agent_deleted: the campaign's agent, deleted (or never an agent of the workspace)."),
  balance: z
    .string()
    .optional()
    .describe('insufficient_credits: the credits the workspace has, a decimal string with 4 places ("0.0500").'),
  required: z
    .string()
    .optional()
    .describe('insufficient_credits: the credits the operation needed, a decimal string with 4 places.'),
  providerCode: z
    .number()
    .int()
    .optional()
    .describe("whatsapp_window_closed: the platform's error code of the same refusal (131047, re-engagement)."),
  windowExpiredAt: z
    .string()
    .nullable()
    .optional()
    .describe('whatsapp_window_closed: when the last window closed; null when the contact never wrote.'),
  templateStatus: z
    .string()
    .optional()
    .describe("whatsapp_template_not_approved: the template's status (PENDING, REJECTED, PAUSED, DISABLED)."),
  e164: z
    .string()
    .nullable()
    .optional()
    .describe(
      "no_carrier_connection: the caller number bound to no carrier connection (null: none was given); no_whatsapp_connection: the sender's number.",
    ),
  senderId: z.string().optional().describe('no_whatsapp_connection: the sender bound to no Meta connection.'),
  maxSecs: z.number().optional().describe('recording_too_long: the longest recording taken, in seconds.'),
  language: z.string().optional().describe('speech_language_unsupported: the language asked for.'),
  supported: z
    .array(z.string())
    .optional()
    .describe('speech_language_unsupported: the languages (BCP 47) the recogniser takes.'),
});

/** The error body of one answer: only the codes that answer can carry. */
export function errorBodyFor(codes: readonly ErrorCode[]) {
  return errorBodySchema.extend({ error: z.enum(codes as [ErrorCode, ...ErrorCode[]]) });
}
