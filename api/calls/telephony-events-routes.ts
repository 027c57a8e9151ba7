import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { callEventSchema } from '../../lib/calls/call-event';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../lib/calls/signature';
import { defineRoute } from '../http/route';
import { assertSignedByCarrier, receiveCallEvent } from './telephony-events';

export const telephonyEventRoutes = [
  defineRoute({
    method: 'post',
    path: '/telephony/{provider}/events',
    access: { public: true },
    summary:
      "A carrier's status event of a call (queued, ringing, in-progress, completed, busy, no-answer, failed, canceled). " +
      'Public: authenticated by the Telephony-Signature header, not by a key. Idempotent by eventId; a call never moves backwards.',
    tags: ['Telephony'],
    params: z.object({ provider: z.string().describe('The carrier: simulated.') }),
    headerParameters: [
      {
        name: 'Telephony-Signature',
        description:
          't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the provider\'s secret>; ' +
          `refused when t is more than ${SIGNATURE_TOLERANCE_SECONDS} s away from now.`,
      },
    ],
    body: callEventSchema,
    beforeValidation: assertSignedByCarrier,
    responses: {
      200: {
        description: 'The event is recorded (or was already): the change is committed.',
        schema: z.object({
          received: z.literal(true),
          applied: z.boolean().describe('false: a duplicate, late or out-of-order event, which changed nothing.'),
        }),
      },
    },
    errors: { 401: [ErrorCode.invalid_signature], 404: [ErrorCode.unknown_call] },
    handler: async ({ services, params, body }) => ({
      status: 200,
      body: await receiveCallEvent(services, params.provider, body),
    }),
  }),
];
