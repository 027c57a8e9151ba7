import type { RunSql } from '../run-sql';
import { CUSTOMER_SERVICE_WINDOW_MS } from './customer-service-window';

/**
 * The WhatsApp senders' pace in SQL, shared by every worker (docs/features/whatsapp/campaigns.md, pacing): a slot on
 * the sender's schedule, the 24-hour recipient limit, and the backoff after Meta's throughput refusals.
 */

/**
 * Takes the sender's next slot, one every 1/messagesPerSecond s, by advancing its nextSendAt in one statement (after
 * its backoffUntil, if any); answers how long until that slot (0: now).
 */
export async function takeSenderSlot(sql: RunSql, senderId: string): Promise<number> {
  const [slot] = await sql<{ waitMs: number }>(
    `UPDATE "WhatsAppSender"
        SET "nextSendAt" = GREATEST(COALESCE("nextSendAt", now() AT TIME ZONE 'UTC'), now() AT TIME ZONE 'UTC',
                                    COALESCE("backoffUntil", now() AT TIME ZONE 'UTC'))
                           + make_interval(secs => 1.0 / "messagesPerSecond")
      WHERE id = $1::uuid
  RETURNING GREATEST(0, EXTRACT(EPOCH FROM ("nextSendAt" - make_interval(secs => 1.0 / "messagesPerSecond")
                                            - now() AT TIME ZONE 'UTC')) * 1000)::float8 AS "waitMs"`,
    senderId,
  );
  return slot?.waitMs ?? 0;
}

/**
 * How long until the sender may message `to` as a new recipient: null when `to` is one of its distinct recipients of
 * business-initiated messages in the last 24 hours or it has fewer than its dailyRecipientLimit; else until the oldest
 * of them leaves the 24 hours.
 */
export async function recipientLimitWait(sql: RunSql, senderId: string, to: string): Promise<number | null> {
  const [limit] = await sql<{ waitMs: number | null }>(
    `WITH recent AS (
       SELECT c."contactE164", min(m."createdAt") AS first_at
         FROM "WhatsAppMessage" m JOIN "WhatsAppConversation" c ON c.id = m."conversationId"
        WHERE m."senderId" = $1::uuid AND m.direction = 'outbound' AND m.type = 'template'
          AND m.status <> 'failed'
          AND m."createdAt" > now() AT TIME ZONE 'UTC' - make_interval(secs => $3::float8)
        GROUP BY c."contactE164")
     SELECT CASE
              WHEN EXISTS (SELECT 1 FROM recent WHERE "contactE164" = $2) THEN NULL
              WHEN (SELECT count(*) FROM recent) < s."dailyRecipientLimit" THEN NULL
              ELSE EXTRACT(EPOCH FROM ((SELECT min(first_at) FROM recent)
                     + make_interval(secs => $3::float8) - now() AT TIME ZONE 'UTC')) * 1000
            END::float8 AS "waitMs"
       FROM "WhatsAppSender" s WHERE s.id = $1::uuid`,
    senderId,
    to,
    CUSTOMER_SERVICE_WINDOW_MS / 1000,
  );
  return limit?.waitMs ?? null;
}

/** The sender backs off `delayMs` more (WhatsAppSender.backoffUntil, from now or from a backoff still running). */
export async function backOffSender(sql: RunSql, senderId: string, delayMs: number): Promise<void> {
  await sql(
    `UPDATE "WhatsAppSender"
        SET "backoffUntil" = GREATEST(COALESCE("backoffUntil", now() AT TIME ZONE 'UTC'), now() AT TIME ZONE 'UTC')
                             + make_interval(secs => $2::float8)
      WHERE id = $1::uuid`,
    senderId,
    delayMs / 1000,
  );
}
