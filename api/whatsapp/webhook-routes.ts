import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import {
  WHATSAPP_UNKNOWN_RETRY_SECONDS,
  WHATSAPP_WEBHOOK_MAX_AGE_SECONDS,
  whatsAppWebhookSchema,
} from '../../lib/whatsapp/webhook';
import { defineRoute } from '../http/route';
import { assertSignedByWhatsApp, receiveWhatsAppWebhook, subscriptionChallenge } from './whatsapp-webhook';

const subscriptionQuery = z.object({
  'hub.mode': z.string().check(atMostCodePoints(40)).optional().describe('subscribe'),
  'hub.verify_token': z
    .string()
    .check(atMostCodePoints(1000))
    .optional()
    .describe('The verify token this API is configured with.'),
  'hub.challenge': z
    .string()
    .check(atMostCodePoints(1000))
    .optional()
    .describe('Answered back as it is when the token is right.'),
});

export const whatsAppWebhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/whatsapp/webhook',
    access: { public: true },
    summary:
      "The WhatsApp provider's subscription check (Meta's webhook verification): hub.mode=subscribe with the " +
      'configured verify token (WHATSAPP_VERIFY_TOKEN) is answered hub.challenge as text; anything else 403.',
    tags: ['WhatsApp'],
    query: subscriptionQuery,
    responses: { 200: { description: 'hub.challenge, as sent.', contentType: 'text/plain', schema: z.string() } },
    errors: { 403: [ErrorCode.forbidden] },
    handler: async ({ services, query, res }) => {
      const challenge = subscriptionChallenge(services, query);
      // Written here: the route table answers JSON otherwise.
      res.status(200).type('text/plain').set('X-Content-Type-Options', 'nosniff').send(challenge);
      return { status: 200 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/whatsapp/webhook',
    access: { public: true },
    summary:
      "The WhatsApp provider's webhooks, as Meta's Cloud API sends them: message statuses (sent, delivered, read, " +
      'failed; a message never moves backwards; delivered or read posts its credit hold, failed voids it), inbound ' +
      "messages (into the contact's conversation, opening the 24-hour window), template reviews and quality " +
      'ratings; any other field is recorded and ignored. Public: authenticated by X-Hub-Signature-256, not by a key. ' +
      "Idempotent by the provider's ids; answered once everything is committed. 404 unknown_whatsapp_target (the rest applied): " +
      `an event names a message or template not known yet, of a number or Business Account of this service, and is ` +
      `younger than ${WHATSAPP_UNKNOWN_RETRY_SECONDS} s: the provider retries it (its id may be on its way). ` +
      "503 temporal_unavailable (the rest committed): a WHATSAPP campaign's lead could not be told of its message's status; " +
      'the provider retries, and the retry tells it.',
    tags: ['WhatsApp'],
    headerParameters: [
      {
        name: 'X-Hub-Signature-256',
        description:
          'sha256=<hex HMAC-SHA256 of the raw body with the app secret (WHATSAPP_APP_SECRET)>, checked before the body is read. ' +
          `A body whose events are all older than ${WHATSAPP_WEBHOOK_MAX_AGE_SECONDS / 86_400} days (the provider's retry ` +
          'horizon) is a replay: refused as stale.',
      },
    ],
    body: whatsAppWebhookSchema,
    beforeValidation: assertSignedByWhatsApp,
    // Meta batches many events (and an inbound message's text) into one body: held to the API's 1 MB, like any body,
    // but read as bytes and verified before anything parses it.
    webhookBodyLimitBytes: 1024 * 1024,
    responses: {
      200: {
        description: 'Every event of the body is recorded (or was already): the changes are committed.',
        schema: z.object({
          received: z.literal(true),
          applied: z.number().int().min(0).describe('Events that changed something.'),
          ignored: z
            .number()
            .int()
            .min(0)
            .describe(
              'Events that changed nothing: duplicates, late or out-of-order statuses, unknown messages or templates, other fields.',
            ),
        }),
      },
    },
    errors: {
      401: [ErrorCode.invalid_signature],
      404: [ErrorCode.unknown_whatsapp_target],
      503: [ErrorCode.temporal_unavailable],
    },
    handler: async ({ services, body }) => ({ status: 200, body: await receiveWhatsAppWebhook(services, body) }),
  }),
];
