import type { RunSql } from '../run-sql';
import { HoldAlreadySettledError } from './credit-errors';
import { voidHold, type SettledHold } from './holds';
import {
  LEDGER_COLUMNS,
  ledgerEntryOf,
  type CreditActor,
  type CreditStore,
  type LedgerEntry,
  type LedgerRow,
} from './ledger-store';
import { settleSpeechAnalysisHold } from './speech-billing';
import { settleTestCallHold } from './test-call-billing';
import { settleTestSessionHold } from './test-session-billing';
import { endTestSession, TEST_SESSION_REFERENCE } from '../test-sessions/test-session-store';
import { SPEECH_CALL_REFERENCE } from '../speech/speech-analysis';
import { settleWhatsAppMessageHold, WHATSAPP_MESSAGE_REFERENCE } from './whatsapp-billing';

/** Settles one abandoned hold as its operation's outcome says; by referenceType. */
export type HoldSettler = (store: CreditStore, hold: LedgerEntry, actor: CreditActor) => Promise<SettledHold | null>;

/** The system actor of the sweep, in the entries it writes. */
export const HOLD_SWEEP_ACTOR: CreditActor = { type: 'system', id: 'hold-sweep' };

const voidAbandonedHold: HoldSettler = (store, hold, actor) =>
  voidHold(store, { workspaceId: hold.workspaceId, idempotencyKey: hold.idempotencyKey, actor });

/**
 * A test call's hold (referenceType call): the call as recorded decides. Ended: posted by its started
 * minutes (voided if it never connected). Not ended this long after it was recorded: its workflow is
 * gone (a test call ends within its deadline and rechecks, about 36 minutes), so it is voided.
 */
export const settleCallHold: HoldSettler = async (store, hold, actor) => {
  const [call] = await store.transaction((sql: RunSql) =>
    sql<{ status: string; durationMs: number | null }>(
      `SELECT status::text AS status, "durationMs" FROM "Call" WHERE id = $1::uuid`,
      hold.referenceId,
    ),
  );
  if (call?.status === 'ended')
    return settleTestCallHold(
      store,
      { workspaceId: hold.workspaceId, callId: hold.referenceId!, durationMs: call.durationMs },
      actor,
    );
  return voidAbandonedHold(store, hold, actor);
};

/**
 * A recording analysis's hold (referenceType speech_call): completed, it is posted; otherwise its
 * workflow is gone (an analysis gives up well within ABANDONED_HOLD_AGE_MS), so the analysis is marked
 * failed, as an operator would find it, and its hold voided. A deleted analysis was never completed.
 */
export const settleSpeechCallHold: HoldSettler = async (store, hold, actor) => {
  const [analysis] = await store.transaction((sql: RunSql) =>
    sql<{ status: string }>(
      `UPDATE "SpeechCall" SET status = CASE WHEN status = 'completed' THEN status ELSE 'failed' END,
         "errorCode" = CASE WHEN status = 'completed' THEN "errorCode" ELSE COALESCE("errorCode", 'internal_error') END,
         "errorMessage" = CASE WHEN status = 'completed' THEN "errorMessage"
           ELSE COALESCE("errorMessage", 'the analysis was abandoned: its workflow ended without finishing it') END
       WHERE id = $1::uuid RETURNING status::text AS status`,
      hold.referenceId,
    ),
  );
  return settleSpeechAnalysisHold(
    store,
    { workspaceId: hold.workspaceId, speechCallId: hold.referenceId!, completed: analysis?.status === 'completed' },
    actor,
  );
};

/**
 * How long a WhatsApp message may stay undelivered and still be delivered: the platform keeps trying a
 * message for up to 30 days (its time to live), so its hold waits that long before it is voided.
 */
export const WHATSAPP_DELIVERY_TTL_MS = 30 * 24 * 60 * 60_000;

/**
 * A WhatsApp message's hold (referenceType whatsapp_message): the message as its webhooks left it
 * decides. Delivered or read: posted; failed, or gone: voided; still accepted or sent: left pending until
 * the platform's 30 days are over (it may yet be delivered), then voided.
 */
export const settleWhatsAppMessageHoldOf: HoldSettler = async (store, hold, actor) => {
  const [message] = await store.transaction((sql: RunSql) =>
    sql<{ status: string }>(
      `SELECT status::text AS status FROM "WhatsAppMessage" WHERE id = $1::uuid`,
      hold.referenceId,
    ),
  );
  const delivered = message?.status === 'delivered' || message?.status === 'read';
  const undecided = message?.status === 'accepted' || message?.status === 'sent';
  if (undecided && Date.now() - new Date(hold.createdAt).getTime() < WHATSAPP_DELIVERY_TTL_MS) return null;
  return settleWhatsAppMessageHold(
    store,
    { workspaceId: hold.workspaceId, messageId: hold.referenceId!, delivered },
    actor,
  );
};

/**
 * A web test session's hold (referenceType test_session, docs/features/test-sessions.md#billing): ended, it is posted
 * by its started minutes (voided if its socket never opened). Not ended this long after it was created: the API
 * process that held its socket died (a session lasts TEST_SESSION_MAX_LENGTH_MS at most), so it is ended now as
 * `abandoned` at its last frame (TestSession.lastActivityAt) and billed up to there.
 */
export const settleTestSessionHoldOf: HoldSettler = async (store, hold, actor) => {
  const sessionId = hold.referenceId!;
  const ended = await store.transaction(async (sql: RunSql) => {
    await endTestSession(sql, sessionId, { reason: 'abandoned', finished: false, at: 'last_activity' });
    const [row] = await sql<{ durationMs: number | null }>(
      `SELECT "durationMs" FROM "TestSession" WHERE id = $1::uuid`,
      sessionId,
    );
    return row;
  });
  if (!ended) return voidAbandonedHold(store, hold, actor);
  return settleTestSessionHold(
    store,
    { workspaceId: hold.workspaceId, sessionId, durationMs: ended.durationMs },
    actor,
  );
};

/** The settler of each referenceType; a hold of any other is voided (its operation is charged nothing). */
export const HOLD_SETTLERS: Readonly<Record<string, HoldSettler>> = {
  call: settleCallHold,
  [SPEECH_CALL_REFERENCE]: settleSpeechCallHold,
  [WHATSAPP_MESSAGE_REFERENCE]: settleWhatsAppMessageHoldOf,
  [TEST_SESSION_REFERENCE]: settleTestSessionHoldOf,
};

/** How old a pending hold must be before the sweep takes its operation for dead: longer than any billed operation runs. */
export const ABANDONED_HOLD_AGE_MS = 2 * 60 * 60_000;

/**
 * The page of the sweep ($1: taken before, $2: how many, $3: the platform's 30 days ago), oldest first, in two parts
 * that each read an index in the order of the page, so that a run costs what it settles, not what waits:
 * - every hold but a WhatsApp message's, through the partial index CreditLedgerEntry_abandoned_idx (only such holds
 *   still pending: the operations in flight, and the abandoned ones);
 * - a WhatsApp message's only once the platform's 30 days are over (CreditLedgerEntry_status_createdAt_idx, from the
 *   oldest pending entry on). Before that its webhooks settle it (Meta retries them until answered, and the answer
 *   waits for the settling) or its workflow does (a refusal voids it); however many wait for a status (phones off for
 *   days, sends marked unknown), they are not read, and cannot fill the page and starve the other holds.
 */
export const ABANDONED_HOLDS_SQL = `
  SELECT ${LEDGER_COLUMNS} FROM (
    (SELECT * FROM "CreditLedgerEntry"
      WHERE status = 'pending' AND kind = 'hold' AND "referenceType" IS DISTINCT FROM '${WHATSAPP_MESSAGE_REFERENCE}'
        AND "createdAt" < $1::timestamptz AT TIME ZONE 'UTC'
      ORDER BY "createdAt" LIMIT $2)
    UNION ALL
    (SELECT * FROM "CreditLedgerEntry"
      WHERE status = 'pending' AND kind = 'hold' AND "referenceType" = '${WHATSAPP_MESSAGE_REFERENCE}'
        AND "createdAt" < least($1::timestamptz, $3::timestamptz) AT TIME ZONE 'UTC'
      ORDER BY "createdAt" LIMIT $2)
  ) AS "CreditLedgerEntry"
  ORDER BY "createdAt" LIMIT $2`;

/**
 * The sweep of holds whose operation died without settling them (a worker killed between the hold and
 * the post, a workflow terminated by an operator, a start lost after the hold was taken): every hold
 * still pending that was taken before `olderThan` (a WhatsApp message's: once the platform's 30 days are over too,
 * ABANDONED_HOLDS_SQL) is settled by its settler (HOLD_SETTLERS), else voided. Safe to run anywhere and at once in
 * several workers: settling is idempotent and a hold settled meanwhile is skipped. Answers how many it posted and
 * voided; `limit` per run.
 */
export async function settleAbandonedHolds(
  store: CreditStore,
  olderThan: Date,
  options: { limit?: number; settlers?: Readonly<Record<string, HoldSettler>>; actor?: CreditActor } = {},
) {
  const { limit = 500, settlers = HOLD_SETTLERS, actor = HOLD_SWEEP_ACTOR } = options;
  const rows = await store.transaction((sql) =>
    sql<LedgerRow>(
      ABANDONED_HOLDS_SQL,
      olderThan.toISOString(),
      limit,
      new Date(Date.now() - WHATSAPP_DELIVERY_TTL_MS).toISOString(),
    ),
  );
  const settled = { posted: 0, voided: 0 };
  for (const hold of rows.map(ledgerEntryOf)) {
    const settler = settlers[hold.referenceType ?? ''] ?? voidAbandonedHold;
    try {
      const result = await settler(store, hold, actor);
      if (result && !result.duplicate) settled[result.hold.status === 'posted' ? 'posted' : 'voided']++;
    } catch (error) {
      // Settled the other way meanwhile (the operation ended as the sweep ran): nothing to do.
      if (!(error instanceof HoldAlreadySettledError)) throw error;
    }
  }
  return settled;
}
