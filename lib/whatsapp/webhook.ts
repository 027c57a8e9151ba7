import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { sameHexDigest } from '../timing-safe';

/**
 * The provider's webhooks (POST /whatsapp/webhook), shaped as Meta's WhatsApp Cloud API sends them:
 * `{ object: 'whatsapp_business_account', entry: [{ id, time?, changes: [{ field, value }] }] }`, signed
 * by `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`. The simulated
 * provider signs with signWhatsAppWebhook; the API checks with verifyWhatsAppSignature before it reads
 * the body. docs/features/whatsapp/webhooks.md.
 */
export const WHATSAPP_SIGNATURE_HEADER = 'x-hub-signature-256';

/** The header value for this very body: `sha256=<hex>`. */
export function signWhatsAppWebhook(body: string | Buffer, appSecret: string): string {
  return `sha256=${hmacHex(body, appSecret)}`;
}

/** Whether the header (`sha256=<hex>`) signs this very raw body with the app secret; compared timing-safely. */
export function verifyWhatsAppSignature(
  rawBody: string | Buffer,
  header: string | undefined,
  appSecret: string,
): boolean {
  if (!header?.startsWith('sha256=')) return false;
  return sameHexDigest(header.slice('sha256='.length).trim(), hmacHex(rawBody, appSecret));
}

const hmacHex = (body: string | Buffer, appSecret: string) =>
  createHmac('sha256', appSecret).update(body).digest('hex');

/**
 * Staleness: Meta signs no timestamp, but it retries a webhook for at most 7 days, so a body whose
 * events are all older than that is no delivery of the provider's: a replay, refused (401
 * invalid_signature) with nothing changed. It also bounds how long the applied events' keys are needed.
 */
export const WHATSAPP_WEBHOOK_MAX_AGE_SECONDS = 7 * 24 * 3600;

/**
 * An event naming a message or template this service does not know (yet), of a number or Business
 * Account it has, is answered 404 while the event is younger than this, so that the provider retries
 * it: its id may be on its way (a status, or a template's review, that overtook the answer to the send
 * or submission recording it). Older, it is answered 200 and ignored: another system's, as retries keep
 * the event's own time, the provider stops within these minutes.
 */
export const WHATSAPP_UNKNOWN_RETRY_SECONDS = 300;

/** Unix seconds, as Meta writes them (a string of digits; a number is taken too). */
const unixSeconds = z
  .union([z.string().regex(/^\d{1,12}$/), z.number().int().min(0).max(999_999_999_999)])
  .transform(Number);

const providerError = z.object({
  code: z.number().int(),
  title: z.string().check(atMostCodePoints(500)).optional(),
  message: z.string().check(atMostCodePoints(2000)).optional(),
  error_data: z.object({ details: z.string().check(atMostCodePoints(2000)).optional() }).optional(),
});

/** One status of an outbound message (value.statuses[]). */
export const whatsAppStatusSchema = z.object({
  id: z.string().min(1).check(atMostCodePoints(200)).describe('The message id (wamid...) the send answered.'),
  status: z
    .string()
    .min(1)
    .check(atMostCodePoints(40))
    .describe('sent, delivered, read or failed (another value is recorded and changes nothing).'),
  timestamp: unixSeconds.describe('When the status was reached, unix seconds.'),
  recipient_id: z.string().check(atMostCodePoints(40)).optional(),
  biz_opaque_callback_data: z
    .string()
    .check(atMostCodePoints(512))
    .optional()
    .describe(
      "What the send gave to echo: the service's own message id, which finds a message whose wamid is not recorded yet.",
    ),
  errors: z.array(providerError).max(20).optional().describe('failed: errors[0] gives the code and title stored.'),
});

/** One inbound message (value.messages[]). */
export const whatsAppInboundMessageSchema = z.object({
  from: z
    .string()
    .regex(/^\d{6,15}$/)
    .describe("The contact's number, digits without +."),
  id: z.string().min(1).check(atMostCodePoints(200)).describe('The message id (wamid...).'),
  timestamp: unixSeconds.describe('When the contact sent it, unix seconds.'),
  type: z.string().min(1).check(atMostCodePoints(40)).describe('text, image, button, interactive, ...'),
  text: z.object({ body: z.string().check(atMostCodePoints(4096)) }).optional(),
  button: z
    .object({
      text: z.string().check(atMostCodePoints(4096)).optional(),
      payload: z
        .string()
        .check(atMostCodePoints(4096))
        .optional()
        .describe("A template quick-reply button's payload (Meta's marketing opt-out button: its text)."),
    })
    .optional(),
  interactive: z
    .object({
      button_reply: z.object({ title: z.string().check(atMostCodePoints(4096)).optional() }).optional(),
      list_reply: z.object({ title: z.string().check(atMostCodePoints(4096)).optional() }).optional(),
    })
    .optional(),
  image: z.object({ caption: z.string().check(atMostCodePoints(4096)).optional() }).optional(),
  video: z.object({ caption: z.string().check(atMostCodePoints(4096)).optional() }).optional(),
  document: z.object({ caption: z.string().check(atMostCodePoints(4096)).optional() }).optional(),
});

const messagesChange = z.object({
  field: z.literal('messages'),
  value: z.object({
    messaging_product: z.string().check(atMostCodePoints(40)).optional(),
    metadata: z.object({
      display_phone_number: z.string().check(atMostCodePoints(40)).optional(),
      phone_number_id: z.string().min(1).check(atMostCodePoints(200)).describe("The sender's phone_number_id."),
    }),
    contacts: z
      .array(
        z.object({
          wa_id: z.string().check(atMostCodePoints(40)).optional(),
          profile: z.object({ name: z.string().check(atMostCodePoints(500)).optional() }).optional(),
        }),
      )
      .max(1000)
      .optional(),
    messages: z.array(whatsAppInboundMessageSchema).max(1000).optional(),
    statuses: z.array(whatsAppStatusSchema).max(1000).optional(),
  }),
});

/** Meta's ids are numbers in JSON; kept as their decimal string. */
const templateId = z.union([z.string().min(1).check(atMostCodePoints(200)), z.number().int()]).transform(String);

const templateStatusChange = z.object({
  field: z.literal('message_template_status_update'),
  value: z.object({
    event: z
      .string()
      .min(1)
      .check(atMostCodePoints(60))
      .describe(
        'APPROVED, REJECTED, PAUSED, DISABLED or PENDING; others (PENDING_DELETION, FLAGGED, ...) change nothing.',
      ),
    message_template_id: templateId,
    message_template_name: z.string().check(atMostCodePoints(512)).optional(),
    message_template_language: z.string().check(atMostCodePoints(20)).optional(),
    reason: z
      .string()
      .check(atMostCodePoints(1000))
      .nullable()
      .optional()
      .describe('REJECTED: why (INVALID_FORMAT, ...).'),
  }),
});

const templateQualityChange = z.object({
  field: z.literal('message_template_quality_update'),
  value: z.object({
    message_template_id: templateId,
    previous_quality_score: z.string().check(atMostCodePoints(40)).optional(),
    new_quality_score: z.string().min(1).check(atMostCodePoints(40)).describe('GREEN, YELLOW, RED or UNKNOWN.'),
    message_template_name: z.string().check(atMostCodePoints(512)).optional(),
    message_template_language: z.string().check(atMostCodePoints(20)).optional(),
  }),
});

export const APPLIED_WHATSAPP_FIELDS = [
  'messages',
  'message_template_status_update',
  'message_template_quality_update',
] as const;

const otherChange = z.object({
  field: z
    .string()
    .min(1)
    .check(atMostCodePoints(200))
    .refine((field) => !(APPLIED_WHATSAPP_FIELDS as readonly string[]).includes(field), 'a field of its own shape')
    .describe('Any other subscribed field: recorded and ignored.'),
  value: z.unknown(),
});

export const whatsAppWebhookSchema = z.object({
  object: z.literal('whatsapp_business_account'),
  entry: z
    .array(
      z.object({
        id: z.string().min(1).check(atMostCodePoints(200)).describe('The WhatsApp Business Account id.'),
        time: z.number().int().min(0).optional().describe('When the change happened, unix seconds (template events).'),
        changes: z.array(z.union([messagesChange, templateStatusChange, templateQualityChange, otherChange])).max(1000),
      }),
    )
    .max(1000),
});

export type WhatsAppWebhook = z.infer<typeof whatsAppWebhookSchema>;
/** A change of each applied field (the schema gives a change of these fields no other shape). */
export type WhatsAppMessagesChange = z.infer<typeof messagesChange>;
export type WhatsAppTemplateStatusChange = z.infer<typeof templateStatusChange>;
export type WhatsAppTemplateQualityChange = z.infer<typeof templateQualityChange>;
export type WhatsAppStatusEvent = z.infer<typeof whatsAppStatusSchema>;
export type WhatsAppInboundMessage = z.infer<typeof whatsAppInboundMessageSchema>;

/** The newest time any event of the body names (unix seconds), or null when none names one. */
export function newestEventTime(webhook: WhatsAppWebhook): number | null {
  let newest: number | null = null;
  const see = (time: number | undefined) => {
    if (time !== undefined && (newest === null || time > newest)) newest = time;
  };
  for (const entry of webhook.entry) {
    see(entry.time);
    for (const change of entry.changes) {
      if (change.field !== 'messages') continue;
      const value = (change as WhatsAppMessagesChange).value;
      for (const status of value.statuses ?? []) see(status.timestamp);
      for (const message of value.messages ?? []) see(message.timestamp);
    }
  }
  return newest;
}

/** Stale: the body names times and even the newest is older than WHATSAPP_WEBHOOK_MAX_AGE_SECONDS. */
export function isStaleWhatsAppWebhook(webhook: WhatsAppWebhook, nowMs = Date.now()): boolean {
  const newest = newestEventTime(webhook);
  return newest !== null && newest < nowMs / 1000 - WHATSAPP_WEBHOOK_MAX_AGE_SECONDS;
}

/** What an inbound message's body is stored as: its text, a reply's title, a caption, or `[<type>]`. */
export function inboundMessageBody(message: WhatsAppInboundMessage): string {
  return (
    message.text?.body ??
    message.button?.text ??
    message.interactive?.button_reply?.title ??
    message.interactive?.list_reply?.title ??
    message.image?.caption ??
    message.video?.caption ??
    message.document?.caption ??
    `[${message.type}]`
  );
}
