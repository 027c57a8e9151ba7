/**
 * A WhatsApp Business provider, shaped on Meta's WhatsApp Cloud API (Graph API): what the service asks
 * of it. Answers are asynchronous as the platform's are: a send is taken (a message id) and its
 * statuses (sent, delivered, read, failed) arrive later as signed webhooks (lib/whatsapp/webhook.ts),
 * as do template reviews and inbound messages. The embedded default is `simulated`
 * (simulators/meta-twin), a participant of its own over HTTP; Meta's Cloud API plugs in here.
 */
export interface WhatsAppProvider {
  /** Recorded with every sender, template and message: a simulated one never passes for a real one. */
  readonly name: string;
  /**
   * POST /{phone-number-id}/messages, tried once: Meta has no idempotency key, so a send whose answer was lost
   * (AmbiguousSendError, lib/whatsapp/graph-client.ts) is resolved by its status webhook, never retried blindly.
   * A refusal is a WhatsAppProviderError with the platform's code (131047 outside the window, 132001
   * unknown template, 132015/132016 template paused/disabled, 130429 throughput exceeded, ...).
   */
  sendMessage(request: WhatsAppSendRequest): Promise<{ messageId: string }>;
  /**
   * Everything a send needs but the request itself (the sender's connection, its token opened), done ahead: the
   * returned function only sends. The service claims a send between the two, so a worker killed after its claim
   * has, as nearly as it can, already put the request on the wire (docs/features/whatsapp/sending.md#no-message-twice).
   */
  prepareSend(request: WhatsAppSendRequest): Promise<() => Promise<{ messageId: string }>>;
  /** POST /{whatsapp-business-account-id}/message_templates: submitted for review, PENDING. */
  submitTemplate(request: WhatsAppTemplateSubmission): Promise<{ id: string; status: WhatsAppTemplateStatus }>;
  /** GET /{template-id}?fields=status,rejected_reason,quality_score: the provider's current review. */
  getTemplate(templateId: string, businessAccountId?: string): Promise<WhatsAppTemplateReview>;
}

export type WhatsAppTemplateStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';
export type WhatsAppTemplateCategory = 'marketing' | 'utility' | 'authentication';
export type WhatsAppQualityRating = 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';

export interface WhatsAppSendRequest {
  /** The sender's phone_number_id. */
  phoneNumberId: string;
  /** The recipient, E.164. */
  to: string;
  /**
   * Echoed in the message's status webhooks (Cloud API: biz_opaque_callback_data): the service's own
   * message id, so a status that arrives before the provider's id is recorded still finds its message.
   */
  callbackData: string;
  message:
    | { type: 'template'; template: { name: string; language: string; parameters: string[] } }
    | { type: 'text'; text: string };
}

export interface WhatsAppTemplateSubmission {
  businessAccountId: string;
  name: string;
  language: string;
  category: WhatsAppTemplateCategory;
  /** With numbered variables {{1}}, {{2}}, ... */
  body: string;
  /** One sample value per variable, in order ({{1}} first): Meta requires them for a body with variables. */
  examples?: string[];
}

export interface WhatsAppTemplateReview {
  status: WhatsAppTemplateStatus;
  /** REJECTED: why (the platform's reason, e.g. INVALID_FORMAT); otherwise null. */
  rejectedReason: string | null;
  qualityRating: WhatsAppQualityRating;
}

/** Error codes of the platform the service acts on (Meta's Cloud API error codes). */
export const WHATSAPP_ERROR = {
  /** Re-engagement message: more than 24 hours since the contact last wrote; only a template may go. */
  reEngagement: 131047,
  /** Message undeliverable (not a WhatsApp user, blocked, ...). */
  undeliverable: 131026,
  /** The template does not exist in this language, or is not approved. */
  templateNotFound: 132001,
  templatePaused: 132015,
  templateDisabled: 132016,
  /** Throughput exceeded for the number. */
  rateLimited: 130429,
  /** Pair rate limit: too many messages from this number to the same recipient in a short time. */
  pairRateLimited: 131056,
} as const;

/** A refusal by the provider, with its error code and title (and the HTTP status it answered). */
export class WhatsAppProviderError extends Error {
  constructor(
    readonly code: number,
    readonly title: string,
    readonly httpStatus: number,
  ) {
    super(`${code} ${title}`);
    this.name = 'WhatsAppProviderError';
  }
}
