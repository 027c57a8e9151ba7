import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { poolCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleWhatsAppMessageHold } from '../../lib/credits/whatsapp-billing';
import { signalWhatsAppMessageStatus } from '../../lib/temporal/whatsapp';
import { ErrorCode } from '../../lib/error-codes';
import { poolSql, type RunSql } from '../../lib/run-sql';
import { sameSecret } from '../../lib/timing-safe';
import { billingOutcome, isReportedMessageStatus, messageStatusRank } from '../../lib/whatsapp/message-status';
import type { WhatsAppTemplateStatus } from '../../lib/whatsapp/provider';
import { isOptOutReply } from '../../lib/whatsapp/opt-out-reply';
import {
  inboundMessageBody,
  isStaleWhatsAppWebhook,
  verifyWhatsAppSignature,
  WHATSAPP_SIGNATURE_HEADER,
  WHATSAPP_UNKNOWN_RETRY_SECONDS,
  type WhatsAppInboundMessage,
  type WhatsAppMessagesChange,
  type WhatsAppTemplateQualityChange,
  type WhatsAppTemplateStatusChange,
  type WhatsAppStatusEvent,
  type WhatsAppWebhook,
} from '../../lib/whatsapp/webhook';
import { Refusal } from '../../lib/refusal';
import { rawBodyOf } from '../http/register-routes';
import type { AppServices } from '../app-services';
import { tellLaddersOfOptOut } from '../../lib/temporal/do-not-call';
import { log } from '../../lib/log';
import { isUuid } from '../../lib/uuid';
import {
  applyInbound,
  applyMessageStatus,
  applyTemplateQualityRating,
  applyTemplateReview,
  connectionProviderOfAccount,
  recordWebhookEvent,
  senderOfAccountExists,
  senderOfNumberExists,
} from './whatsapp-webhook-store';

/** The actor of the ledger entries a status webhook writes. */
const WEBHOOK_ACTOR: CreditActor = { type: 'system', id: 'whatsapp-webhook' };

/** The provider webhooks come from: the one senders and templates go through (their ids mean nothing elsewhere). */
export const webhookProviderOf = (services: AppServices): string => services.whatsapp?.provider?.name ?? 'simulated';

/** 401 unless the raw body carries X-Hub-Signature-256 by the app secret; nothing of the body is read before. */
export function assertSignedByWhatsApp(req: Request, services: AppServices): void {
  const appSecret = services.whatsapp?.appSecret;
  if (!appSecret || !verifyWhatsAppSignature(rawBodyOf(req), req.get(WHATSAPP_SIGNATURE_HEADER), appSecret))
    throw new Refusal(ErrorCode.invalid_signature);
}

/**
 * The provider's subscription check (GET /whatsapp/webhook): hub.mode=subscribe and hub.verify_token
 * equal (timing-safe) to WHATSAPP_VERIFY_TOKEN answer hub.challenge; anything else, or no token
 * configured, is 403 forbidden.
 */
export function subscriptionChallenge(
  services: AppServices,
  query: { 'hub.mode'?: string; 'hub.verify_token'?: string; 'hub.challenge'?: string },
): string {
  const verifyToken = services.whatsapp?.verifyToken;
  const challenge = query['hub.challenge'];
  if (!verifyToken || query['hub.mode'] !== 'subscribe' || challenge === undefined)
    throw new Refusal(ErrorCode.forbidden);
  if (!sameSecret(query['hub.verify_token'], verifyToken)) throw new Refusal(ErrorCode.forbidden);
  return challenge;
}

export interface WebhookOutcome {
  received: true;
  /** Events that changed something. */
  applied: number;
  /** Events that changed nothing: duplicates, late or out-of-order statuses, unknown messages or templates, other fields. */
  ignored: number;
}

/**
 * Applies every event of a signed webhook in order, each in one statement and idempotent by its
 * (provider, eventKey); answered once all are committed. Stale (every event older than Meta's 7-day
 * retry horizon): 401 invalid_signature, nothing changed. An event naming a message or template not
 * known (yet) of a number or Business Account of ours, younger than WHATSAPP_UNKNOWN_RETRY_SECONDS:
 * 404 unknown_whatsapp_target after the rest is applied, so that the provider retries the body.
 * docs/features/whatsapp/webhooks.md.
 */
export async function receiveWhatsAppWebhook(
  services: AppServices,
  webhook: WhatsAppWebhook,
  nowMs = Date.now(),
): Promise<WebhookOutcome> {
  if (isStaleWhatsAppWebhook(webhook, nowMs)) throw new Refusal(ErrorCode.invalid_signature);
  const configured = webhookProviderOf(services);
  const sql = poolSql(services.sql);
  const outcome: WebhookOutcome = { received: true, applied: 0, ignored: 0 };
  let retry = false;
  const untold: { error?: unknown } = {};
  /** Counts an event; one naming what is not known (null) is to be retried when recent and of a number or account of ours. */
  const count = async (result: boolean | null, time: number | undefined, ours: () => Promise<boolean>) => {
    if (result) outcome.applied++;
    else outcome.ignored++;
    if (result === null && !retry && time !== undefined && time >= nowMs / 1000 - WHATSAPP_UNKNOWN_RETRY_SECONDS)
      retry = await ours();
  };
  for (const entry of webhook.entry) {
    // Meta names the WhatsApp Business Account in entry.id: a connected account's own provider (meta, meta-twin).
    const provider = (await connectionProviderOfAccount(sql, entry.id)) ?? configured;
    const accountIsOurs = () => senderOfAccountExists(sql, provider, entry.id);
    for (const change of entry.changes) {
      if (change.field === 'messages') {
        const { metadata, statuses, messages, contacts } = (change as WhatsAppMessagesChange).value;
        const numberIsOurs = () => senderOfNumberExists(sql, provider, metadata.phone_number_id);
        for (const status of statuses ?? [])
          await count(
            await applyStatus(services, sql, provider, metadata.phone_number_id, status, untold),
            status.timestamp,
            numberIsOurs,
          );
        for (const message of messages ?? []) {
          const name = contacts?.find((contact) => contact.wa_id === message.from)?.profile?.name ?? null;
          await count(
            await applyInboundMessage(services, sql, provider, metadata.phone_number_id, message, name),
            undefined,
            numberIsOurs,
          );
        }
      } else if (change.field === 'message_template_status_update') {
        const { message_template_id: templateId, event, reason } = (change as WhatsAppTemplateStatusChange).value;
        const time = entry.time ?? Math.floor(nowMs / 1000);
        await count(
          await applyTemplateStatus(sql, provider, templateId, event, reason ?? null, time),
          entry.time,
          accountIsOurs,
        );
      } else if (change.field === 'message_template_quality_update') {
        const { message_template_id: templateId, new_quality_score: quality } = (
          change as WhatsAppTemplateQualityChange
        ).value;
        const time = entry.time ?? Math.floor(nowMs / 1000);
        await count(await applyTemplateQuality(sql, provider, templateId, quality, time), entry.time, accountIsOurs);
      } else {
        await recordOtherChange(sql, provider, entry.id, change);
        outcome.ignored++;
      }
    }
  }
  if (retry) throw new Refusal(ErrorCode.unknown_whatsapp_target);
  if (untold.error !== undefined)
    throw new Refusal(
      ErrorCode.temporal_unavailable,
      { detail: "a campaign's lead could not be told of its message's status; the events are committed: send again" },
      { retryAfterSeconds: 5 },
    );
  return outcome;
}

/** Any other field: recorded once (by a digest of the change) and ignored. */
async function recordOtherChange(sql: RunSql, provider: string, entryId: string, change: unknown) {
  const digest = createHash('sha256').update(JSON.stringify(change)).digest('hex');
  await recordWebhookEvent(sql, provider, `other:${entryId}:${digest}`);
}

const at = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * Applies one status; then, when it reports delivered, read or failed and the message stands delivered
 * or read (posted) or failed (voided), settles its hold. Idempotent, and done again for a duplicate, so
 * an API that died between the commit and the settling is healed by the provider's retry. A message
 * that failed after its hold was posted (delivered, then failed) keeps it posted: it was delivered.
 * Unknown message: null, nothing recorded (receiveWhatsAppWebhook answers 404 while it is recent, and
 * the number is one of ours, so that the provider retries; else it is ignored).
 */
async function applyStatus(
  services: AppServices,
  sql: RunSql,
  provider: string,
  phoneNumberId: string,
  status: WhatsAppStatusEvent,
  /** Set when a lead could not be told of its message's status (tellLead). */
  untold: { error?: unknown },
): Promise<boolean | null> {
  if (!isReportedMessageStatus(status.status)) return false;
  const callbackData = status.biz_opaque_callback_data;
  const error = status.errors?.[0];
  const row = await applyMessageStatus(sql, {
    provider,
    phoneNumberId,
    providerMessageId: status.id,
    status: status.status,
    rank: messageStatusRank(status.status),
    eventKey: `status:${status.id}:${status.status}`,
    time: at(status.timestamp),
    errorCode: error?.code ?? null,
    errorTitle: error ? (error.title ?? error.message ?? null) : null,
    messageId: callbackData && isUuid(callbackData) ? callbackData : null,
  });
  if (!row) return null;
  const settle = billingOutcome(row.status);
  if (settle && billingOutcome(status.status)) {
    const message = { workspaceId: row.workspaceId, messageId: row.id, delivered: settle === 'post' };
    await settleWhatsAppMessageHold(poolCreditStore(services.sql), message, WEBHOOK_ACTOR).catch((failure) => {
      if (!(failure instanceof HoldAlreadySettledError)) throw failure;
    });
  }
  // The lead waits for delivered, read or failed only: a sent status would cost it a workflow task for nothing.
  if (row.leadWorkflowId && LEAD_DECIDING_STATUSES.has(row.status))
    await tellLead(services, row.leadWorkflowId, { messageId: row.id, status: row.status }, untold);
  return row.applied;
}

/**
 * A WHATSAPP campaign's lead waits for its message's status (workflows/whatsapp/lead-message.ts): it is told the
 * status the message stands at, duplicates included (harmless). A lead that has ended is no failure.
 */
const LEAD_DECIDING_STATUSES: ReadonlySet<string> = new Set(['delivered', 'read', 'failed']);

/**
 * A lead that could not be told (Temporal slow or unreachable) would otherwise wait for its status until its wait
 * ends, a day later (DELIVERY_WAIT_MS): the webhook is then answered 503 once every event of the body is committed,
 * so that the provider sends it again, and the retry, applying nothing twice, tells the lead again.
 */
async function tellLead(
  services: AppServices,
  workflowId: string,
  status: { messageId: string; status: string },
  untold: { error?: unknown },
) {
  // A lead that has ended is no failure (lib/temporal/whatsapp.ts).
  await signalWhatsAppMessageStatus(services.temporal, workflowId, status).catch((error: unknown) => {
    log.warn({ err: error, workflowId }, "lead not told of its message's status: the provider is asked to retry");
    untold.error ??= error;
  });
}

async function applyInboundMessage(
  services: AppServices,
  sql: RunSql,
  provider: string,
  phoneNumberId: string,
  message: WhatsAppInboundMessage,
  contactName: string | null,
): Promise<boolean> {
  const contactE164 = `+${message.from}`;
  const { inserted, listedIn } = await applyInbound(sql, {
    provider,
    phoneNumberId,
    eventKey: `message:${message.id}`,
    contactE164,
    contactName,
    time: at(message.timestamp),
    type: message.type,
    body: inboundMessageBody(message),
    providerMessageId: message.id,
    optOut: isOptOutReply(message),
  });
  // An opt-out reply listed the number: the workspace's ladders waiting to call it end now.
  if (listedIn) await tellLaddersOfOptOut(services.temporal, sql, { workspaceId: listedIn, phones: [contactE164] });
  return inserted;
}

/** The review outcomes a template takes; another event (PENDING_DELETION, FLAGGED, ...) is recorded and changes nothing. */
const TEMPLATE_STATUSES: readonly WhatsAppTemplateStatus[] = ['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'];

async function applyTemplateStatus(
  sql: RunSql,
  provider: string,
  templateId: string,
  event: string,
  reason: string | null,
  time: number,
): Promise<boolean | null> {
  const known = (TEMPLATE_STATUSES as readonly string[]).includes(event);
  const row = await applyTemplateReview(sql, {
    provider,
    providerTemplateId: templateId,
    eventKey: `template_status:${templateId}:${event}:${time}`,
    status: known ? event : 'PENDING',
    reason,
    time: at(time),
    known,
  });
  return row?.found ? row.moved > 0 : null;
}

const QUALITY_RATINGS = ['GREEN', 'YELLOW', 'RED', 'UNKNOWN'];

async function applyTemplateQuality(
  sql: RunSql,
  provider: string,
  templateId: string,
  quality: string,
  time: number,
): Promise<boolean | null> {
  const row = await applyTemplateQualityRating(sql, {
    provider,
    providerTemplateId: templateId,
    keyPrefix: `template_quality:${templateId}:`,
    paddedTime: String(time).padStart(12, '0'),
    quality,
    known: QUALITY_RATINGS.includes(quality),
  });
  return row?.found ? row.moved > 0 : null;
}
