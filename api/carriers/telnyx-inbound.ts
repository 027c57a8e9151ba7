import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { createTelnyxCalls } from '../../lib/carriers/telnyx/telnyx-calls';
import { TELNYX_INBOUND_ROUTE } from '../../lib/carriers/telnyx/telnyx-urls';
import {
  TELNYX_RECORDING_SAVED,
  telnyxCallControlId,
  telnyxWebhookSchema,
  type TelnyxWebhook,
} from '../../lib/carriers/telnyx/telnyx-webhooks';
import { telnyxSignatureHeaders } from './telnyx-routes';
import { poolSql } from '../../lib/run-sql';
import { defineRoute } from '../http/route';
import type { AppServices } from '../app-services';
import { recordedInboundAttempt } from './inbound-call-store';
import { recordInboundCall } from './inbound-calls';
import { assertSignedByTelnyx, receiveTelnyxWebhook, verifiedTelnyxConnectionOf } from './telnyx-webhooks';

/**
 * The route the connection's Call Control application sends its webhooks to (docs/features/carriers/inbound.md): a call
 * placed to one of its numbers is announced here (call.initiated, incoming, parked); the product records it (on the
 * caller's lead, if any) and answers it naming the call's own webhook URL, where the rest of its life goes, as an
 * outbound call's does. Signed like every Telnyx webhook (the connection's public key).
 */

const inboundWebhookSchema = telnyxWebhookSchema.extend({
  data: telnyxWebhookSchema.shape.data.extend({
    payload: telnyxWebhookSchema.shape.data.shape.payload.extend({
      direction: z.string().check(atMostCodePoints(40)).optional().describe('incoming, for a call to a number.'),
      from: z.string().check(atMostCodePoints(200)).optional().describe("The caller's number."),
      to: z.string().check(atMostCodePoints(200)).optional().describe('The number called.'),
    }),
  }),
});
type InboundWebhook = z.infer<typeof inboundWebhookSchema>;

const notApplied = { received: true as const, applied: false };

/**
 * call.initiated of an incoming call: the call recorded and answered (actions/answer with its own webhook URL and
 * client_state), or hung up when the number routes to no agent. Any other event here is of a call the product
 * recorded (it came before the answer named the call's URL): handled as the call's own webhook; else received and
 * applied to nothing.
 */
async function receiveInboundWebhook(services: AppServices, req: Request, webhook: InboundWebhook) {
  const connection = verifiedTelnyxConnectionOf(req);
  const { event_type: type, payload } = webhook.data;
  // The recording of an inbound call is saved to the call's own webhook URL (its answer named it), never here.
  if (type === TELNYX_RECORDING_SAVED) return notApplied;
  const callControlId = telnyxCallControlId(webhook as TelnyxWebhook);
  const calls = createTelnyxCalls(connection, { publicBaseUrl: services.publicBaseUrl! });
  if (type === 'call.initiated' && payload.direction === 'incoming' && payload.from && payload.to) {
    const recorded = await recordInboundCall(services, {
      connectionId: connection.id,
      provider: connection.provider,
      providerCallId: callControlId,
      from: payload.from,
      to: payload.to,
    });
    if (!recorded) {
      await calls.hangup(callControlId);
      return notApplied;
    }
    return { received: true as const, applied: await calls.answer(callControlId, recorded.attemptId) };
  }
  const attemptId = await recordedInboundAttempt(poolSql(services.sql), {
    connectionId: connection.id,
    provider: connection.provider,
    providerCallId: callControlId,
  });
  return attemptId ? receiveTelnyxWebhook(services, req, attemptId, webhook as TelnyxWebhook) : notApplied;
}

export const telnyxInboundRoutes = [
  defineRoute({
    method: 'post',
    path: TELNYX_INBOUND_ROUTE,
    access: { public: true },
    summary:
      "The webhook URL of the connection's Call Control application (docs/features/carriers/inbound.md): a call to one " +
      "of the workspace's numbers (call.initiated, incoming) is recorded, on the caller's lead when the workspace has " +
      "one with that number, and answered (actions/answer) by the number's inbound agent, its later webhooks going to " +
      "the call's own route; a number routed to no agent is hung up. Public: authenticated by the Ed25519 signature " +
      "with the connection's public key. Idempotent by the call_control_id.",
    tags: ['Telephony'],
    params: z.object({
      connectionId: z
        .string()
        .describe('The carrier connection the number is bound to: its public key checks the signature.'),
    }),
    headerParameters: telnyxSignatureHeaders,
    body: inboundWebhookSchema,
    beforeValidation: assertSignedByTelnyx,
    responses: {
      200: {
        description: 'The webhook is recorded, and what it commanded sent.',
        schema: z.object({ received: z.literal(true), applied: z.boolean() }),
      },
    },
    errors: { 401: [ErrorCode.invalid_signature], 404: [ErrorCode.unknown_call] },
    handler: async ({ services, req, body }) => ({
      status: 200,
      body: await receiveInboundWebhook(services, req, body),
    }),
  }),
];
