import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { NOW_UTC } from '../../lib/sql-clock';
import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { poolCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleWhatsAppMessageHold } from '../../lib/credits/whatsapp-billing';
import { signalWhatsAppMessageStatus } from '../../lib/temporal/whatsapp';
import { ErrorCode } from '../../lib/error-codes';
import { poolSql, type RunSql } from '../../lib/run-sql';
import { sameSecret } from '../../lib/timing-safe';
import {
  billingOutcome,
  isReportedMessageStatus,
  messageStatusRank,
  messageStatusRankSql,
} from '../../lib/whatsapp/message-status';
import type { WhatsAppTemplateStatus } from '../../lib/whatsapp/provider';
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
import { log } from '../../lib/log';
import { isUuid } from '../../lib/uuid';

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
    const provider = (await sql<{ provider: string }>(CONNECTION_PROVIDER_SQL, entry.id))[0]?.provider ?? configured;
    const accountIsOurs = () => exists(sql, SENDER_OF_ACCOUNT_SQL, provider, entry.id);
    for (const change of entry.changes) {
      if (change.field === 'messages') {
        const { metadata, statuses, messages, contacts } = (change as WhatsAppMessagesChange).value;
        const numberIsOurs = () => exists(sql, SENDER_OF_NUMBER_SQL, provider, metadata.phone_number_id);
        for (const status of statuses ?? [])
          await count(
            await applyStatus(services, sql, provider, metadata.phone_number_id, status, untold),
            status.timestamp,
            numberIsOurs,
          );
        for (const message of messages ?? []) {
          const name = contacts?.find((contact) => contact.wa_id === message.from)?.profile?.name ?? null;
          await count(
            await applyInboundMessage(sql, provider, metadata.phone_number_id, message, name),
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

const CONNECTION_PROVIDER_SQL = `SELECT provider FROM "WhatsAppConnection" WHERE "businessAccountId" = $1 AND "deletedAt" IS NULL ORDER BY "createdAt" LIMIT 1`;
const SENDER_OF_NUMBER_SQL = `SELECT 1 FROM "WhatsAppSender" WHERE provider = $1 AND "phoneNumberId" = $2 LIMIT 1`;
const SENDER_OF_ACCOUNT_SQL = `SELECT 1 FROM "WhatsAppSender" WHERE provider = $1 AND "businessAccountId" = $2 LIMIT 1`;
const exists = async (sql: RunSql, text: string, ...values: unknown[]) => (await sql(text, ...values)).length > 0;

const EVENT_INSERT = `INSERT INTO "WhatsAppWebhookEvent" (provider, "eventKey", "receivedAt")`;
const RECORD_OTHER_SQL = `${EVENT_INSERT} VALUES ($1, $2, ${NOW_UTC}) ON CONFLICT DO NOTHING`;

/** Any other field: recorded once (by a digest of the change) and ignored. */
async function recordOtherChange(sql: RunSql, provider: string, entryId: string, change: unknown) {
  const digest = createHash('sha256').update(JSON.stringify(change)).digest('hex');
  await sql(RECORD_OTHER_SQL, provider, `other:${entryId}:${digest}`);
}

const at = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * One status in one statement: the outbound message of the sender (by phone_number_id) found by the
 * provider's id, or by the callback data the send gave (its own id) while the provider's id is not
 * recorded yet; the event recorded once per (provider, status:<wamid>:<status>); the message moved only
 * forward (lib/whatsapp/message-status.ts), with the status's time and, failed, errors[0]. A send whose answer was
 * lost (handOver ambiguous, or unknown once its resend window ended without a status) found by its callback data is
 * resolved by it: handed over (answered, or resent).
 */
const APPLY_STATUS_SQL = `
  WITH message AS (
    SELECT m.id, m."workspaceId", m.status, m."leadId",
           ${messageStatusRankSql('m.status')} < $5 AS moves
      FROM "WhatsAppMessage" m JOIN "WhatsAppSender" s ON s.id = m."senderId"
     WHERE s.provider = $1 AND s."phoneNumberId" = $2 AND m.direction = 'outbound'
       AND (m."providerMessageId" = $3 OR ($10::uuid IS NOT NULL AND m.id = $10::uuid AND m."providerMessageId" IS NULL))
     ORDER BY (m."providerMessageId" = $3) DESC NULLS LAST
     LIMIT 1
       FOR UPDATE OF m
  ), recorded AS (
    ${EVENT_INSERT} SELECT $1, $6, ${NOW_UTC} FROM message
    ON CONFLICT DO NOTHING
    RETURNING true AS fresh
  ), moved AS (
    UPDATE "WhatsAppMessage" m
       SET status = $4::"WhatsAppMessageStatus",
           "providerMessageId" = coalesce(m."providerMessageId", $3),
           "handOver" = CASE WHEN m."providerMessageId" IS NULL AND m."handOver" IN ('ambiguous', 'unknown')
                             THEN CASE WHEN m."sendAttempts" >= 2 THEN 'resent' ELSE 'answered' END
                             ELSE m."handOver" END,
           "sentAt" = CASE WHEN $4::text = 'sent' THEN $7::timestamptz AT TIME ZONE 'UTC' ELSE m."sentAt" END,
           "deliveredAt" = CASE WHEN $4::text = 'delivered' THEN $7::timestamptz AT TIME ZONE 'UTC' ELSE m."deliveredAt" END,
           "readAt" = CASE WHEN $4::text = 'read' THEN $7::timestamptz AT TIME ZONE 'UTC' ELSE m."readAt" END,
           "failedAt" = CASE WHEN $4::text = 'failed' THEN $7::timestamptz AT TIME ZONE 'UTC' ELSE m."failedAt" END,
           "errorCode" = CASE WHEN $4::text = 'failed' THEN $8::int ELSE m."errorCode" END,
           "errorTitle" = CASE WHEN $4::text = 'failed' THEN $9 ELSE m."errorTitle" END
      FROM message, recorded
     WHERE m.id = message.id AND message.moves
    RETURNING m.status
  )
  SELECT message.id::text, message."workspaceId"::text AS "workspaceId",
         coalesce(moved.status, message.status)::text AS status, moved.status IS NOT NULL AS applied,
         (SELECT l."workflowId" FROM "Lead" l WHERE l.id = message."leadId") AS "leadWorkflowId"
    FROM message LEFT JOIN moved ON true`;

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
  const [row] = await sql<{
    id: string;
    workspaceId: string;
    status: string;
    applied: boolean;
    leadWorkflowId: string | null;
  }>(
    APPLY_STATUS_SQL,
    provider,
    phoneNumberId,
    status.id,
    status.status,
    messageStatusRank(status.status),
    `status:${status.id}:${status.status}`,
    at(status.timestamp),
    error?.code ?? null,
    error ? (error.title ?? error.message ?? null) : null,
    callbackData && isUuid(callbackData) ? callbackData : null,
  );
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

/**
 * One inbound message in one statement: recorded once per (provider, message:<wamid>); the contact's
 * conversation created or updated (its name, lastInboundAt, which opens the customer-service window,
 * and lastMessageAt, never moved back), unarchived when the message is newer than its archiving, as
 * inboxes do; the message inserted, received, at the time the contact sent it.
 */
const APPLY_INBOUND_SQL = `
  WITH sender AS (
    SELECT id, "workspaceId" FROM "WhatsAppSender" WHERE provider = $1 AND "phoneNumberId" = $2
  ), recorded AS (
    ${EVENT_INSERT} SELECT $1, $3, ${NOW_UTC} FROM sender
    ON CONFLICT DO NOTHING
    RETURNING true AS fresh
  ), conversation AS (
    INSERT INTO "WhatsAppConversation" AS c
           (id, "workspaceId", "senderId", "contactE164", "contactName", "lastInboundAt", "lastMessageAt", "createdAt")
    SELECT gen_random_uuid(), sender."workspaceId", sender.id, $4, $5, $6::timestamptz AT TIME ZONE 'UTC',
           $6::timestamptz AT TIME ZONE 'UTC', ${NOW_UTC}
      FROM sender, recorded
    ON CONFLICT ("senderId", "contactE164") DO UPDATE
       SET "contactName" = coalesce(EXCLUDED."contactName", c."contactName"),
           "lastInboundAt" = greatest(c."lastInboundAt", EXCLUDED."lastInboundAt"),
           "lastMessageAt" = greatest(c."lastMessageAt", EXCLUDED."lastMessageAt"),
           archived = c.archived AND coalesce(c."archivedAt" >= EXCLUDED."lastInboundAt", false),
           "archivedAt" = CASE WHEN c.archived AND c."archivedAt" >= EXCLUDED."lastInboundAt" THEN c."archivedAt" END
    RETURNING c.id, c."workspaceId", c."senderId"
  ), inserted AS (
    INSERT INTO "WhatsAppMessage"
           (id, "workspaceId", "conversationId", "senderId", direction, type, body, status, "providerMessageId", "createdAt")
    SELECT gen_random_uuid(), c."workspaceId", c.id, c."senderId", 'inbound', $7, $8, 'received', $9,
           $6::timestamptz AT TIME ZONE 'UTC'
      FROM conversation c
    ON CONFLICT ("senderId", "providerMessageId") DO NOTHING
    RETURNING id
  )
  SELECT (SELECT count(*) FROM inserted)::int AS inserted`;

async function applyInboundMessage(
  sql: RunSql,
  provider: string,
  phoneNumberId: string,
  message: WhatsAppInboundMessage,
  contactName: string | null,
): Promise<boolean> {
  const [row] = await sql<{ inserted: number }>(
    APPLY_INBOUND_SQL,
    provider,
    phoneNumberId,
    `message:${message.id}`,
    `+${message.from}`,
    contactName,
    at(message.timestamp),
    message.type,
    inboundMessageBody(message),
    message.id,
  );
  return (row?.inserted ?? 0) > 0;
}

/** The review outcomes a template takes; another event (PENDING_DELETION, FLAGGED, ...) is recorded and changes nothing. */
const TEMPLATE_STATUSES: readonly WhatsAppTemplateStatus[] = ['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'];

/**
 * One template review in one statement: recorded once per (provider, template_status:<id>:<event>:<time>);
 * the status stored unless the template's status is newer than the event (statusUpdatedAt, to the
 * second the provider's times have), with its reason when REJECTED.
 */
const APPLY_TEMPLATE_STATUS_SQL = `
  WITH template AS (
    SELECT id FROM "WhatsAppTemplate" WHERE provider = $1 AND "providerTemplateId" = $2 FOR UPDATE
  ), recorded AS (
    ${EVENT_INSERT} SELECT $1, $3, ${NOW_UTC} FROM template
    ON CONFLICT DO NOTHING
    RETURNING true AS fresh
  ), moved AS (
    UPDATE "WhatsAppTemplate" t
       SET status = $4::"WhatsAppTemplateStatus", "rejectedReason" = CASE WHEN $4::text = 'REJECTED' THEN $5::text END,
           "statusUpdatedAt" = greatest(t."statusUpdatedAt", $6::timestamptz AT TIME ZONE 'UTC')
      FROM template, recorded
     WHERE t.id = template.id AND $7 AND date_trunc('second', t."statusUpdatedAt") <= $6::timestamptz AT TIME ZONE 'UTC'
    RETURNING t.id
  )
  SELECT (SELECT count(*) FROM template)::int AS found, (SELECT count(*) FROM moved)::int AS moved`;

async function applyTemplateStatus(
  sql: RunSql,
  provider: string,
  templateId: string,
  event: string,
  reason: string | null,
  time: number,
): Promise<boolean | null> {
  const known = (TEMPLATE_STATUSES as readonly string[]).includes(event);
  const [row] = await sql<{ found: number; moved: number }>(
    APPLY_TEMPLATE_STATUS_SQL,
    provider,
    templateId,
    `template_status:${templateId}:${event}:${time}`,
    known ? event : 'PENDING',
    reason,
    at(time),
    known,
  );
  return row?.found ? row.moved > 0 : null;
}

const QUALITY_RATINGS = ['GREEN', 'YELLOW', 'RED', 'UNKNOWN'];

/**
 * One quality update in one statement: recorded once per (provider, template_quality:<id>:<time>:<score>);
 * stored unless an update recorded for the template is newer (the time, zero-padded in the key, orders them).
 */
const APPLY_TEMPLATE_QUALITY_SQL = `
  WITH template AS (
    SELECT id FROM "WhatsAppTemplate" WHERE provider = $1 AND "providerTemplateId" = $2 FOR UPDATE
  ), newer AS (
    SELECT 1 FROM "WhatsAppWebhookEvent"
     WHERE provider = $1 AND left("eventKey", length($3::text)) = $3::text AND substr("eventKey", length($3::text) + 1, 12) > $4::text
     LIMIT 1
  ), recorded AS (
    ${EVENT_INSERT} SELECT $1, $3::text || $4::text || ':' || $5::text, ${NOW_UTC} FROM template
    ON CONFLICT DO NOTHING
    RETURNING true AS fresh
  ), moved AS (
    UPDATE "WhatsAppTemplate" t SET "qualityRating" = $5::text
      FROM template, recorded
     WHERE t.id = template.id AND $6 AND NOT EXISTS (SELECT 1 FROM newer)
    RETURNING t.id
  )
  SELECT (SELECT count(*) FROM template)::int AS found, (SELECT count(*) FROM moved)::int AS moved`;

async function applyTemplateQuality(
  sql: RunSql,
  provider: string,
  templateId: string,
  quality: string,
  time: number,
): Promise<boolean | null> {
  const [row] = await sql<{ found: number; moved: number }>(
    APPLY_TEMPLATE_QUALITY_SQL,
    provider,
    templateId,
    `template_quality:${templateId}:`,
    String(time).padStart(12, '0'),
    quality,
    QUALITY_RATINGS.includes(quality),
  );
  return row?.found ? row.moved > 0 : null;
}
