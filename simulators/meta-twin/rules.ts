/**
 * The Cloud API's error codes the provider answers or reports, as Meta lists them
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes): the provider's own list, not the
 * product's (lib/whatsapp/provider.ts), so that a product reading a code wrongly meets the code Meta sends.
 */
export const META_ERROR = {
  /** Re-engagement message: more than 24 hours since the recipient last replied; only a template may go. */
  reEngagement: 131047,
  /** Message undeliverable (not a WhatsApp user, blocked, …). */
  undeliverable: 131026,
  /** Template name does not exist in the translation (or is not approved). */
  templateNotFound: 132001,
  /** Template is paused (its quality dropped). */
  templatePaused: 132015,
  /** Template is disabled (paused too many times). */
  templateDisabled: 132016,
  /** Cloud API throughput reached for the business phone number. */
  rateLimited: 130429,
  /** Spam rate limit hit: too many messages from this number to the same user in a short time (pair rate limit). */
  pairRateLimited: 131056,
} as const;

/** A template's status as the message_template_status_update webhook and the template's `status` field carry it. */
export type TemplateStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';

/** A template's quality score, as the message_template_quality_update webhook carries it. */
export type QualityRating = 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';

/**
 * What the simulated WhatsApp provider decides, as pure functions, so tests and demos can script every
 * path (notes: "The simulated WhatsApp provider"). Times are real (simulated) milliseconds; the
 * provider multiplies them by its time scale (SIMULATED_WHATSAPP_TIME_SCALE).
 *
 * Template review, by the template's name (first match wins):
 *   contains `reject`  -> REJECTED (reason INVALID_FORMAT) after the review
 *   contains `disable` -> APPROVED (quality GREEN) after the review, then quality RED and DISABLED
 *   contains `pause`   -> APPROVED (quality GREEN) after the review, then quality RED and PAUSED
 *   otherwise          -> APPROVED (quality GREEN) after the review
 * Message outcome, by the recipient's last digit (as the simulated carrier decides calls):
 *   9 -> failed (131026 undeliverable); 8 -> sent, then failed (131026);
 *   7 -> sent, delivered (never read); 0-6 -> sent, delivered, read.
 */
export const SIMULATED_WHATSAPP_TIMES = {
  /** A submitted template's review. */
  reviewMs: 2_000,
  /** An approved template's quality dropping to RED (then PAUSED or DISABLED), after its approval. */
  qualityDropMs: 5_000,
  /** Sent after the message was taken. */
  sentMs: 1_000,
  /** Delivered after sent. */
  deliveredMs: 2_000,
  /** Read after delivered. */
  readMs: 5_000,
} as const;

export const REJECTED_REASON = 'INVALID_FORMAT';

/** One thing that happens to a template, each posted as one webhook. */
export type TemplateStep =
  | { atMs: number; kind: 'status'; status: TemplateStatus; reason: string | null }
  | { atMs: number; kind: 'quality'; previous: QualityRating; quality: QualityRating };

export function templateReviewSteps(name: string): TemplateStep[] {
  const { reviewMs, qualityDropMs } = SIMULATED_WHATSAPP_TIMES;
  const lower = name.toLowerCase();
  if (lower.includes('reject'))
    return [{ atMs: reviewMs, kind: 'status', status: 'REJECTED', reason: REJECTED_REASON }];
  const approved: TemplateStep[] = [
    { atMs: reviewMs, kind: 'status', status: 'APPROVED', reason: null },
    { atMs: reviewMs, kind: 'quality', previous: 'UNKNOWN', quality: 'GREEN' },
  ];
  const downgraded = lower.includes('disable') ? 'DISABLED' : lower.includes('pause') ? 'PAUSED' : null;
  if (!downgraded) return approved;
  const dropAt = reviewMs + qualityDropMs;
  return [
    ...approved,
    { atMs: dropAt, kind: 'quality', previous: 'GREEN', quality: 'RED' },
    { atMs: dropAt, kind: 'status', status: downgraded, reason: null },
  ];
}

export interface TemplateState {
  status: TemplateStatus;
  rejectedReason: string | null;
  quality: QualityRating;
}

/** Where the steps that are due leave the template: PENDING with quality UNKNOWN before any. */
export function templateStateAfter(steps: readonly TemplateStep[]): TemplateState {
  const state: TemplateState = { status: 'PENDING', rejectedReason: null, quality: 'UNKNOWN' };
  for (const step of steps)
    if (step.kind === 'status') Object.assign(state, { status: step.status, rejectedReason: step.reason });
    else state.quality = step.quality;
  return state;
}

export type MessageStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** One status of an outbound message (stored as the message's plan), or an inbound message's own webhook. */
export type PlanStep =
  | { atMs: number; kind: 'status'; status: MessageStatus; error?: { code: number; title: string } }
  | { atMs: number; kind: 'inbound' };

export const UNDELIVERABLE = { code: META_ERROR.undeliverable, title: 'Message undeliverable' } as const;

/** Digits only: how the platform writes a WhatsApp id (wa_id, recipient_id, from). */
export const waId = (phone: string) => phone.replace(/\D/g, '');

export function messagePlan(to: string): PlanStep[] {
  const { sentMs, deliveredMs, readMs } = SIMULATED_WHATSAPP_TIMES;
  const lastDigit = Number(waId(to).at(-1) ?? 0);
  const sent = { atMs: sentMs, kind: 'status', status: 'sent' } as const;
  const delivered = { atMs: sentMs + deliveredMs, kind: 'status', status: 'delivered' } as const;
  if (lastDigit === 9) return [{ atMs: sentMs, kind: 'status', status: 'failed', error: UNDELIVERABLE }];
  if (lastDigit === 8)
    return [sent, { atMs: sentMs + deliveredMs, kind: 'status', status: 'failed', error: UNDELIVERABLE }];
  if (lastDigit === 7) return [sent, delivered];
  return [sent, delivered, { atMs: sentMs + deliveredMs + readMs, kind: 'status', status: 'read' }];
}
