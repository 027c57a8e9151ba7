import { NOW_UTC } from '../../lib/sql-clock';
import type { RunSql } from '../../lib/run-sql';
import { messageStatusRankSql } from '../../lib/whatsapp/message-status';

/**
 * The WhatsApp webhook's statements (docs/features/whatsapp/webhooks.md): each event applied in one statement and
 * recorded once by its (provider, eventKey) in "WhatsAppWebhookEvent". The event keys and values come from
 * whatsapp-webhook.ts.
 */

const CONNECTION_PROVIDER_SQL = `SELECT provider FROM "WhatsAppConnection" WHERE "businessAccountId" = $1 AND "deletedAt" IS NULL ORDER BY "createdAt" LIMIT 1`;
const SENDER_OF_NUMBER_SQL = `SELECT 1 FROM "WhatsAppSender" WHERE provider = $1 AND "phoneNumberId" = $2 LIMIT 1`;
const SENDER_OF_ACCOUNT_SQL = `SELECT 1 FROM "WhatsAppSender" WHERE provider = $1 AND "businessAccountId" = $2 LIMIT 1`;

const EVENT_INSERT = `INSERT INTO "WhatsAppWebhookEvent" (provider, "eventKey", "receivedAt")`;
const RECORD_OTHER_SQL = `${EVENT_INSERT} VALUES ($1, $2, ${NOW_UTC}) ON CONFLICT DO NOTHING`;

const exists = async (sql: RunSql, text: string, ...values: unknown[]) => (await sql(text, ...values)).length > 0;

/** The provider of a connected Business Account (meta, meta-twin), if any. */
export async function connectionProviderOfAccount(sql: RunSql, businessAccountId: string): Promise<string | undefined> {
  return (await sql<{ provider: string }>(CONNECTION_PROVIDER_SQL, businessAccountId))[0]?.provider;
}

export const senderOfNumberExists = (sql: RunSql, provider: string, phoneNumberId: string) =>
  exists(sql, SENDER_OF_NUMBER_SQL, provider, phoneNumberId);

export const senderOfAccountExists = (sql: RunSql, provider: string, businessAccountId: string) =>
  exists(sql, SENDER_OF_ACCOUNT_SQL, provider, businessAccountId);

/** An event that changes nothing, recorded once. */
export async function recordWebhookEvent(sql: RunSql, provider: string, eventKey: string): Promise<void> {
  await sql(RECORD_OTHER_SQL, provider, eventKey);
}

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

export interface MessageStatusToApply {
  provider: string;
  phoneNumberId: string;
  providerMessageId: string;
  status: string;
  rank: number;
  eventKey: string;
  /** ISO 8601. */
  time: string;
  errorCode: number | null;
  errorTitle: string | null;
  /** The send's callback data when it is a message id. */
  messageId: string | null;
}

export async function applyMessageStatus(sql: RunSql, event: MessageStatusToApply) {
  const [row] = await sql<{
    id: string;
    workspaceId: string;
    status: string;
    applied: boolean;
    leadWorkflowId: string | null;
  }>(
    APPLY_STATUS_SQL,
    event.provider,
    event.phoneNumberId,
    event.providerMessageId,
    event.status,
    event.rank,
    event.eventKey,
    event.time,
    event.errorCode,
    event.errorTitle,
    event.messageId,
  );
  return row;
}

/**
 * One inbound message in one statement: recorded once per (provider, message:<wamid>); the contact's
 * conversation created or updated (its name, lastInboundAt, which opens the customer-service window,
 * and lastMessageAt, never moved back), unarchived when the message is newer than its archiving, as
 * inboxes do; the message inserted, received, at the time the contact sent it; an opt-out reply
 * (lib/whatsapp/opt-out-reply.ts) lists the contact's number on the workspace's Do-Not-Call list, source whatsapp_reply
 * with this message, in the same statement (a redelivered webhook lists nothing twice).
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
    RETURNING id, "workspaceId"
  ), opted_out AS (
    INSERT INTO "DoNotCall" ("workspaceId", phone, source, "messageId", "createdAt")
    SELECT "workspaceId", $4, 'whatsapp_reply', id, ${NOW_UTC} FROM inserted WHERE $10::boolean
    ON CONFLICT DO NOTHING
    RETURNING "workspaceId"
  )
  SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT "workspaceId"::text FROM opted_out) AS "listedIn"`;

export interface InboundMessageToApply {
  provider: string;
  phoneNumberId: string;
  eventKey: string;
  contactE164: string;
  contactName: string | null;
  /** ISO 8601. */
  time: string;
  type: string;
  body: string | null;
  providerMessageId: string;
  /** The message asks not to be messaged again (lib/whatsapp/opt-out-reply.ts). */
  optOut: boolean;
}

/**
 * Answers whether the message was inserted, and the workspace whose Do-Not-Call list it put the contact's number on
 * (null: none, or listed before).
 */
export async function applyInbound(
  sql: RunSql,
  message: InboundMessageToApply,
): Promise<{ inserted: boolean; listedIn: string | null }> {
  const [row] = await sql<{ inserted: number; listedIn: string | null }>(
    APPLY_INBOUND_SQL,
    message.provider,
    message.phoneNumberId,
    message.eventKey,
    message.contactE164,
    message.contactName,
    message.time,
    message.type,
    message.body,
    message.providerMessageId,
    message.optOut,
  );
  return { inserted: (row?.inserted ?? 0) > 0, listedIn: row?.listedIn ?? null };
}

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

/** Answers whether the template was found and whether the status moved it. */
export async function applyTemplateReview(
  sql: RunSql,
  review: {
    provider: string;
    providerTemplateId: string;
    eventKey: string;
    status: string;
    reason: string | null;
    /** ISO 8601. */
    time: string;
    known: boolean;
  },
) {
  const [row] = await sql<{ found: number; moved: number }>(
    APPLY_TEMPLATE_STATUS_SQL,
    review.provider,
    review.providerTemplateId,
    review.eventKey,
    review.status,
    review.reason,
    review.time,
    review.known,
  );
  return row;
}

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

/** Answers whether the template was found and whether the rating moved it. */
export async function applyTemplateQualityRating(
  sql: RunSql,
  update: {
    provider: string;
    providerTemplateId: string;
    /** template_quality:<id>: */
    keyPrefix: string;
    /** The time, zero-padded to 12 digits. */
    paddedTime: string;
    quality: string;
    known: boolean;
  },
) {
  const [row] = await sql<{ found: number; moved: number }>(
    APPLY_TEMPLATE_QUALITY_SQL,
    update.provider,
    update.providerTemplateId,
    update.keyPrefix,
    update.paddedTime,
    update.quality,
    update.known,
  );
  return row;
}
