import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { e164PhoneSchema } from '../../lib/phone';
import { optionalIdempotencyKey } from '../http/idempotency-key';
import { defineRoute } from '../http/route';
import { whatsAppMessageSchema } from './whatsapp-message-view';
import { sendWhatsAppMessage } from './whatsapp-sending';

const sendSchema = z
  .strictObject({
    senderId: z.string().uuid().describe('A connected sender of the workspace (GET /whatsapp/senders).'),
    to: e164PhoneSchema.describe('The recipient, E.164.'),
    template: z
      .strictObject({
        id: z.string().uuid().describe('An APPROVED template of the workspace (GET /whatsapp/templates).'),
        variables: z
          .array(z.string().min(1).check(atMostCodePoints(1024)))
          .max(100)
          .default([])
          .describe("The values of its variables, {{1}} first: exactly the template's variableCount."),
      })
      .optional()
      .describe('A template message: sent at any time.'),
    text: z
      .string()
      .min(1)
      // UTF-16 code units, not code points (atMostCodePoints): the text goes to Meta as it is, whose documented
      // "4096 characters" the WhatsApp twin (simulators/meta-twin/server.ts) counts in UTF-16 units; counting code
      // points would take 4096 emoji (8192 units) that Meta may refuse after the send was charged and claimed.
      .max(4096)
      .optional()
      .describe(
        "Free-form text: only within 24 hours of the contact's last message to this sender. At most 4096 UTF-16 code units, as Meta counts them: an emoji or other character beyond U+FFFF counts 2.",
      ),
  })
  .refine((body) => (body.template === undefined) !== (body.text === undefined), {
    message: 'give exactly one of template and text',
    path: ['template'],
  });

const sentSchema = (deduplicated: boolean) =>
  z.object({ message: whatsAppMessageSchema, deduplicated: z.literal(deduplicated) });

export const whatsAppSendRoutes = [
  defineRoute({
    method: 'post',
    path: '/whatsapp/messages',
    access: { permission: 'whatsapp.send' },
    summary:
      "Send one WhatsApp message from a sender of the workspace, billed per message by its category (docs/features/credits.md), never to a number on the workspace's Do-Not-Call list (409 number_on_do_not_call: nothing recorded, held or sent): a template message (APPROVED; 409 whatsapp_template_not_approved otherwise) at any time, or free-form text only within the 24-hour customer-service window the contact's last message opened (409 whatsapp_window_closed, the platform's 131047 re-engagement error, otherwise). " +
      "The price is held (402 insufficient_credits: nothing sent), the message handed to the provider by a durable job: 202 with the message, accepted. Its statuses (sent, delivered, read, failed) follow by the provider's webhooks; the hold is charged when it is delivered and released when it fails. " +
      'An optional Idempotency-Key header makes a retried request answer the message it sent (200, deduplicated). ' +
      'A sender bound to no Meta connection while simulators are disabled (SIMULATORS, the production default): 409 no_whatsapp_connection naming it.',
    tags: ['WhatsApp'],
    body: sendSchema,
    headerParameters: [
      {
        name: 'Idempotency-Key',
        description:
          'Optional, 1 to 255 characters. The same key in the same workspace never sends (nor charges) twice: the first message is answered (200).',
      },
    ],
    responses: {
      202: { description: 'Accepted: the message, handed to the provider by its job.', schema: sentSchema(false) },
      200: {
        description: 'A message was sent under this Idempotency-Key before: that message, as it is now.',
        schema: sentSchema(true),
      },
    },
    errors: {
      402: [ErrorCode.insufficient_credits],
      409: [
        ErrorCode.whatsapp_window_closed,
        ErrorCode.whatsapp_template_not_approved,
        ErrorCode.whatsapp_sender_disconnected,
        ErrorCode.number_on_do_not_call,
        ErrorCode.no_whatsapp_connection,
      ],
      503: [ErrorCode.temporal_unavailable],
    },
    handler: async ({ services, principal, body, req }) => {
      const sent = await sendWhatsAppMessage(services, principal, body, optionalIdempotencyKey(req));
      return { status: sent.deduplicated ? 200 : 202, body: sent };
    },
  }),
];
