import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { TELNYX_CALL_ROUTE } from '../../lib/carriers/telnyx/telnyx-urls';
import {
  TELNYX_SIGNATURE_HEADER,
  TELNYX_TIMESTAMP_HEADER,
  telnyxWebhookSchema,
} from '../../lib/carriers/telnyx/telnyx-webhooks';
import { defineRoute } from '../http/route';
import { assertSignedByTelnyx, receiveTelnyxWebhook } from './telnyx-webhooks';

/** The headers every Telnyx webhook is signed with, as the OpenAPI description shows them. */
export const telnyxSignatureHeaders = [
  {
    name: TELNYX_SIGNATURE_HEADER,
    description: "base64 Ed25519 signature, by the connection's Telnyx account, of `<telnyx-timestamp>|<body>`.",
  },
  { name: TELNYX_TIMESTAMP_HEADER, description: 'Unix seconds when Telnyx signed; more than 300 s away: refused.' },
];

/** Telnyx's webhooks of a call placed through a Telnyx connection (docs/features/carriers/telnyx.md#telnyx-webhooks). */
export const telnyxRoutes = [
  defineRoute({
    method: 'post',
    path: TELNYX_CALL_ROUTE,
    access: { public: true },
    summary:
      "Telnyx's Call Control webhooks of a call (the dial's webhook_url), JSON: call.initiated, call.answered, " +
      'call.hangup, answering-machine detection, call.transcription, call.speak.ended and call.recording.saved, which ' +
      "move the call, walk the agent's script (speak, transcription_start, hangup commands) and store its recording " +
      '(found by GET /recordings: 502 provider_error while Telnyx lists none, so that Telnyx sends it again). ' +
      'Public: authenticated by the Ed25519 ' +
      "signature with the connection's public key (the telnyx SDK's webhooks.unwrap; more than 300 s old is refused). " +
      'Idempotent by call and event type (progress) and by step (the script); a call never moves backwards.',
    tags: ['Telephony'],
    params: z.object({
      connectionId: z
        .string()
        .describe('The carrier connection the call was placed through: its public key checks the signature.'),
      attemptId: z.string().describe('The attempt the call was dialed for (the dial put it in the URL).'),
    }),
    headerParameters: telnyxSignatureHeaders,
    body: telnyxWebhookSchema,
    beforeValidation: assertSignedByTelnyx,
    responses: {
      200: {
        description: 'The webhook is recorded (or was already), and what it commanded sent.',
        schema: z.object({
          received: z.literal(true),
          applied: z.boolean().describe('false: a duplicate, late or out-of-order webhook, which changed nothing.'),
        }),
      },
    },
    errors: { 401: [ErrorCode.invalid_signature], 404: [ErrorCode.unknown_call], 502: [ErrorCode.provider_error] },
    handler: async ({ services, req, params, body }) => ({
      status: 200,
      body: await receiveTelnyxWebhook(services, req, params.attemptId, body),
    }),
  }),
];
