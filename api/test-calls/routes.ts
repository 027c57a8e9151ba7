import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { leadFieldsSchema } from '../../lib/campaigns/lead-fields';
import { ErrorCode } from '../../lib/error-codes';
import { e164PhoneSchema } from '../../lib/phone';
import { optionalIdempotencyKey } from '../http/idempotency-key';
import { defineRoute } from '../http/route';
import { placeTestCall } from './test-calls';

/** Whether a string of the value, or a key of it, at any depth, holds U+0000. */
const holdsNul = (value: unknown): boolean =>
  typeof value === 'string'
    ? value.includes('\0')
    : typeof value === 'object' && value !== null
      ? Object.entries(value).some(([key, inner]) => key.includes('\0') || holdsNul(inner))
      : false;

const testCallBodySchema = z.strictObject({
  agentId: z
    .string()
    .describe('A live agent of the workspace (GET /agents): it places the call and holds the conversation.'),
  to: e164PhoneSchema.describe('The E.164 number to call.'),
  from: e164PhoneSchema
    .optional()
    .describe(
      "A voice number of the workspace (GET /phone-numbers) to call from; the call goes through the carrier connection it is bound to. Default: the first voice number the workspace was assigned; none: the simulated carrier's default.",
    ),
  lead: z
    .strictObject({
      name: z.string().check(atMostCodePoints(200)).optional().describe('How the agent addresses the person called.'),
      fields: leadFieldsSchema
        .default({})
        .describe("The lead's fields the agent's script and extraction read, as a pushed lead's fields."),
    })
    // Stored as jsonb, which cannot hold U+0000: refused here rather than failing the insert.
    .refine((lead) => !holdsNul(lead), 'must not contain the character U+0000')
    .optional()
    .describe(
      'Who the agent believes it is calling (as a pushed lead); default: no name, no fields. No string in it may contain U+0000.',
    ),
});

const testCallAcceptedSchema = z.object({
  callId: z.string().uuid().describe('The test call: GET /calls/{id} reads it as it rings, talks and ends.'),
  deduplicated: z
    .boolean()
    .describe(
      'true: a call was already placed under this Idempotency-Key; it is answered and no second call is placed.',
    ),
});

export const testCallRoutes = [
  defineRoute({
    method: 'post',
    path: '/calls/test',
    access: { permission: 'calls.test' },
    summary:
      'Place one test call with an agent to a number, outside any campaign (no campaign line is taken), exactly as a campaign call from the caller number goes: through the carrier connection (Twilio or Telnyx) that number is bound to, the agent walking its script when a person answers; a number bound to no connection, through the simulated carrier where simulators are enabled (SIMULATORS); where they are disabled (the production default) the caller is the number asked for (from) or the first voice number bound to a carrier connection, and a number bound to none, or no bound number at all, is 409 no_carrier_connection naming it (e164, null when none was asked for), nothing placed. 202 with the call id at once; the call is then read with GET /calls/{id} and listed by GET /calls with kind test. ' +
      "A dial refused for good ends the call at once, never retried and not billed: a number the carrier refuses as invalid_number, a caller number the carrier refuses (not the account's) or a connection removed since the call was placed as failed. " +
      'Billed per started minute of talk (docs/features/credits.md): credits are held when the call is placed (one minute at least, up to the longest call as the balance allows), charged by started minutes when it ends, released when it never connected. A balance short of one minute: 402 insufficient_credits with balance and required, nothing placed. ' +
      'An optional Idempotency-Key header makes a retried request answer the call it placed (200, deduplicated) instead of placing a second. ' +
      'A number on the Do-Not-Call list: 409 number_on_do_not_call, nothing placed.',
    tags: ['Calls'],
    body: testCallBodySchema,
    headerParameters: [
      {
        name: 'Idempotency-Key',
        description:
          'Optional, 1 to 255 characters. The same key in the same workspace never places a second test call: the first call is answered (200).',
      },
    ],
    responses: {
      202: { description: 'The call is placed; its id.', schema: testCallAcceptedSchema },
      200: {
        description: 'A call was placed under this Idempotency-Key before: that call.',
        schema: testCallAcceptedSchema,
      },
    },
    errors: {
      402: [ErrorCode.insufficient_credits],
      409: [ErrorCode.number_on_do_not_call, ErrorCode.no_carrier_connection],
      503: [ErrorCode.temporal_unavailable],
    },
    handler: async ({ services, principal, body, req }) => {
      const idempotencyKey = optionalIdempotencyKey(req);
      const placed = await placeTestCall(services, principal, body, idempotencyKey);
      return { status: placed.deduplicated ? 200 : 202, body: placed };
    },
  }),
];
