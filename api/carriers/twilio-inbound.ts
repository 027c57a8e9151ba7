import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { callEventOfTwilio, type TwilioStatusCallback } from '../../lib/carriers/twilio/twilio-callbacks';
import { TWILIO_INBOUND_ROUTE } from '../../lib/carriers/twilio/twilio-urls';
import { receiveCallEvent } from '../calls/telephony-events';
import { defineRoute, FORM_MEDIA_TYPE } from '../http/route';
import type { AppServices } from '../app-services';
import { afterInboundEvent, recordInboundCall } from './inbound-calls';
import { assertSignedByTwilio, twilioCallTwiml, verifiedConnectionOf } from './twilio-callbacks';
import { sendTwiml, signatureHeader, statusCallbackRoute } from './twilio-routes';

/**
 * The routes a number of a Twilio connection is pointed at (docs/features/carriers/inbound.md): its VoiceUrl, asked when a
 * person calls it, and its StatusCallback. Signed like every Twilio request (assertSignedByTwilio, the connection's
 * auth token); the call is found by the CallSid, and the number by To among the connection's numbers.
 */

const e164 = z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be an E.164 number');

const inboundVoiceRequestSchema = z.looseObject({
  CallSid: z.string().regex(/^CA[0-9a-fA-F]{32}$/, 'must be CA followed by 32 hexadecimal digits'),
  From: e164.describe("The caller's number."),
  To: e164.describe('The number called: one of the workspace numbers bound to the connection.'),
  Direction: z.string().check(atMostCodePoints(40)).optional().describe('inbound.'),
});
type InboundVoiceRequest = z.infer<typeof inboundVoiceRequestSchema>;

/** Twilio hangs up on it: a number that routes to no agent (any longer) is not answered. */
const HANG_UP = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/**
 * The TwiML of a call a person places to a number of the connection: the call recorded (on the caller's lead, if any:
 * inbound-calls.ts) and answered as an answered outbound call is, by the number's agent: the same document, the same
 * script walk or ConversationRelay session, under the call's attempt id. A number routed to no live agent: <Hangup/>.
 */
async function inboundTwiml(services: AppServices, req: Request, form: InboundVoiceRequest): Promise<string> {
  const connection = verifiedConnectionOf(req);
  const recorded = await recordInboundCall(services, {
    connectionId: connection.id,
    provider: connection.provider,
    providerCallId: form.CallSid,
    from: form.From,
    to: form.To,
  });
  if (!recorded) return HANG_UP;
  // The CallSid: a workspace that records calls records this one from here (docs/features/recordings.md#twilio).
  return twilioCallTwiml(services, req, recorded.attemptId, { kind: 'answer' }, { CallSid: form.CallSid });
}

/** A status callback of an inbound call, applied as any call's (found by its CallSid), then its aftermath. */
async function receiveInboundStatus(services: AppServices, req: Request, form: TwilioStatusCallback) {
  const connection = verifiedConnectionOf(req);
  const { attemptId: _, ...event } = callEventOfTwilio(form, '');
  let received: { received: true; applied: boolean };
  try {
    received = await receiveCallEvent(services, connection.provider, event, connection.id);
  } catch (error) {
    // A call the product hung up on unanswered (its number routes to no agent) was never recorded: nothing to apply,
    // and nothing for Twilio to send again.
    if (error instanceof Refusal && error.code === ErrorCode.unknown_call)
      return { received: true as const, applied: false };
    throw error;
  }
  await afterInboundEvent(services, {
    connectionId: connection.id,
    provider: connection.provider,
    providerCallId: form.CallSid,
  });
  return received;
}

const params = z.object({
  connectionId: z
    .string()
    .describe('The carrier connection the number is bound to: its auth token checks the signature.'),
});
const errors = { 401: [ErrorCode.invalid_signature], 404: [ErrorCode.unknown_call] };

export const twilioInboundRoutes = [
  defineRoute({
    method: 'post',
    path: `${TWILIO_INBOUND_ROUTE}/voice`,
    summary:
      "The VoiceUrl of the connection's numbers (docs/features/carriers/inbound.md): a person called a number of the " +
      "workspace. The call is recorded (on the caller's lead, when the workspace has one with that number) and answered " +
      "by the number's inbound agent, as an answered outbound call is; a number routed to no agent: <Hangup/>. " +
      'Public: authenticated by X-Twilio-Signature. Asked again for the same CallSid, the same call answers.',
    access: { public: true },
    tags: ['Telephony'],
    params,
    headerParameters: signatureHeader,
    body: inboundVoiceRequestSchema,
    bodyMediaType: FORM_MEDIA_TYPE,
    beforeValidation: assertSignedByTwilio,
    responses: { 200: { description: 'A TwiML document.', contentType: 'text/xml', schema: z.string() } },
    errors,
    handler: async ({ services, req, res, body }) => sendTwiml(res, await inboundTwiml(services, req, body)),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_INBOUND_ROUTE}/status`,
    summary:
      "The StatusCallback of the connection's numbers: an inbound call's end (Twilio's number-level callback), applied " +
      "as any call's status callback; a call that had a conversation gets its call intelligence. A call the product " +
      'never recorded (hung up on: its number routes to no agent) is received and applied to nothing. Public: ' +
      'authenticated by X-Twilio-Signature. Idempotent by CallSid and SequenceNumber.',
    ...statusCallbackRoute,
    params,
    handler: async ({ services, req, body }) => ({
      status: 200,
      body: await receiveInboundStatus(services, req, body),
    }),
  }),
];
