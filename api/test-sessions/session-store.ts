import { createHash } from 'node:crypto';
import { redactedTurnsOfWorkspace } from '../../lib/compliance/compliance-store';
import type { ConversationTurn } from '../../lib/conversation/engine';
import type { RunSql } from '../../lib/run-sql';
import type { TestSessionOutcome } from '../../lib/test-sessions/test-session-store';
import type { Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';
import { isUuid } from '../../lib/uuid';
import { testSessionHoldKey } from '../../lib/credits/test-session-billing';

/**
 * The test sessions' SQL (docs/features/test-sessions.md): a session's creation and transcript, its socket's claim,
 * turns and activity, its tools' outcome and the sweep of sessions nobody holds.
 */

/** The stored form of a session token: its sha256, hex. */
export const tokenHashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** A session as its socket runs it: the agent (as the script walk reads it) and the test lead. */
export interface ClaimedSession {
  id: string;
  workspaceId: string;
  lead: { name: string | null; phone: string | null; fields: Record<string, unknown> };
  agent: {
    id: string;
    language: string;
    voiceId: string;
    script: { openingLine: string; questions: string[]; closing: string };
    voicemailMessage: string | null;
    instructions: string | null;
    firstMessage: string | null;
    transferNumber: string | null;
    hints: string[] | null;
  };
  /** The credits its hold reserved (null: no hold found): the minutes they cover are the session's to talk. */
  heldCredits: string | null;
  disclosure: string | null;
}

/**
 * Spends the session's one-time token: the socket opens the session (connectedAt, the start of its minutes) when the
 * token is the session's, unspent, unexpired, and the session not ended; otherwise nothing changes (null). One
 * statement: two handshakes with one token open one socket.
 */
export async function claimSession(sql: RunSql, sessionId: string, token: string): Promise<ClaimedSession | null> {
  if (!isUuid(sessionId) || token === '') return null;
  const [row] = await sql<ClaimedSession>(
    {
      name: 'test_session_claim',
      text: `WITH claimed AS (
               UPDATE "TestSession" SET "connectedAt" = now() AT TIME ZONE 'UTC', "lastActivityAt" = now() AT TIME ZONE 'UTC'
                WHERE id = $1::uuid AND "tokenHash" = $2 AND "connectedAt" IS NULL AND "endedAt" IS NULL
                  AND "tokenExpiresAt" > now() AT TIME ZONE 'UTC'
                RETURNING id, "workspaceId", "agentId", lead)
             SELECT c.id::text, c."workspaceId"::text, c.lead,
                    json_build_object('id', a.id, 'language', a.language, 'voiceId', a."voiceId", 'script', a.script,
                      'voicemailMessage', a."voicemailMessage", 'instructions', a.instructions,
                      'firstMessage', a."firstMessage", 'transferNumber', a."transferNumber",
                      'hints', (SELECT coalesce(array_agg(t.term ORDER BY ad.position, t.ord), '{}')
                                  FROM "AgentDictionary" ad JOIN "Dictionary" d ON d.id = ad."dictionaryId",
                                       unnest(d.terms) WITH ORDINALITY AS t(term, ord)
                                 WHERE ad."agentId" = a.id)) AS agent,
                    cs.disclosure,
                    (SELECT (-h.amount)::text FROM "CreditLedgerEntry" h
                      WHERE h."workspaceId" = c."workspaceId" AND h."idempotencyKey" = $3 AND h.kind = 'hold') AS "heldCredits"
               FROM claimed c JOIN "Agent" a ON a.id = c."agentId"
                    LEFT JOIN "ComplianceSettings" cs ON cs."workspaceId" = c."workspaceId"`,
    },
    sessionId,
    tokenHashOf(token),
    testSessionHoldKey(sessionId),
  );
  return row ?? null;
}

/**
 * Stores turns once per session, step and part (a repeated store adds nothing), redacted first by the workspace's
 * rules as a call's turns are (lib/compliance), each timed from the session's first stored turn.
 */
export async function storeSessionTurns(
  sql: RunSql,
  session: { id: string; workspaceId: string },
  turns: readonly ConversationTurn[],
): Promise<void> {
  if (turns.length === 0) return;
  await sql(
    {
      name: 'test_session_turns',
      text: `WITH now AS (SELECT (now() AT TIME ZONE 'UTC') AS at),
                  base AS (SELECT min("createdAt") AS at FROM "TestSessionTurn" WHERE "sessionId" = $1::uuid)
             INSERT INTO "TestSessionTurn" ("sessionId", step, part, speaker, text, tool, "offsetMs", "createdAt")
             SELECT $1::uuid, t.step, t.part, t.speaker, t.text, t.tool,
                    greatest(0, round(extract(epoch FROM now.at - coalesce(base.at, now.at)) * 1000))::int, now.at
               FROM jsonb_to_recordset($2::jsonb) AS t(step int, part int, speaker text, text text, tool jsonb), now, base
             ON CONFLICT ("sessionId", step, part) DO NOTHING`,
    },
    session.id,
    JSON.stringify(await redactedTurnsOfWorkspace(sql, session.workspaceId, turns)),
  );
}

/** An interrupted answer: the agent turn becomes what the lead heard of it; nothing heard removes it. */
export async function trimSessionTurn(
  sql: RunSql,
  sessionId: string,
  turn: { step: number; part: number; text: string },
): Promise<void> {
  await sql(
    {
      name: 'test_session_trim_turn',
      text: `WITH trimmed AS (
               UPDATE "TestSessionTurn" SET text = $4
                WHERE "sessionId" = $1::uuid AND step = $2 AND part = $3 AND speaker = 'agent' AND $4 <> '')
             DELETE FROM "TestSessionTurn"
              WHERE "sessionId" = $1::uuid AND step = $2 AND part = $3 AND speaker = 'agent' AND $4 = ''`,
    },
    sessionId,
    turn.step,
    turn.part,
    turn.text,
  );
}

/** A frame went by: the session's last activity, where it is taken to have ended should its process die. */
export async function touchSession(sql: RunSql, sessionId: string): Promise<void> {
  await sql(
    {
      name: 'test_session_touch',
      text: `UPDATE "TestSession" SET "lastActivityAt" = now() AT TIME ZONE 'UTC' WHERE id = $1::uuid AND "endedAt" IS NULL`,
    },
    sessionId,
  );
}

/** Marks the session's outcome while it is on (a tool after its end changes nothing): answers whether it was on. */
export async function markSessionOutcome(
  sql: RunSql,
  sessionId: string,
  outcome: TestSessionOutcome,
): Promise<boolean> {
  const rows = await sql(
    {
      name: 'test_session_tool_outcome',
      text: `UPDATE "TestSession" SET outcome = $2 WHERE id = $1::uuid AND "endedAt" IS NULL RETURNING 1`,
    },
    sessionId,
    outcome,
  );
  return rows.length > 0;
}

/**
 * Sessions nobody holds any more, oldest first, at most `limit`: a token never used and expired, or a connected
 * session silent for longer than `silentForMs`.
 */
export async function unheldSessions(sql: RunSql, silentForMs: number, limit: number) {
  return sql<{ id: string; workspaceId: string; connected: boolean }>(
    {
      name: 'test_session_sweep',
      text: `SELECT id::text, "workspaceId"::text, "connectedAt" IS NOT NULL AS connected FROM "TestSession"
              WHERE "endedAt" IS NULL
                AND (("connectedAt" IS NULL AND "tokenExpiresAt" < now() AT TIME ZONE 'UTC')
                  OR "lastActivityAt" < (now() AT TIME ZONE 'UTC') - $1 * interval '1 millisecond')
              ORDER BY "createdAt" LIMIT $2`,
    },
    silentForMs,
    limit,
  );
}

/**
 * Takes the workspace's test-session lock for the transaction, then counts its open sessions (connected, or with a
 * token still valid): two creations never both take the last place.
 */
export async function lockedOpenSessionCount(tx: Prisma.TransactionClient, workspaceId: string): Promise<number> {
  await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended('test-sessions:' || ${workspaceId}::text, 0))`;
  const [counted] = await tx.$queryRaw<Array<{ open: number }>>`
        SELECT count(*)::int AS open FROM "TestSession"
         WHERE "workspaceId" = ${workspaceId}::uuid AND "endedAt" IS NULL
           AND ("connectedAt" IS NOT NULL OR "tokenExpiresAt" > now() AT TIME ZONE 'UTC')`;
  return counted?.open ?? 0;
}

export async function insertTestSession(tx: Prisma.TransactionClient, data: Prisma.TestSessionUncheckedCreateInput) {
  await tx.testSession.create({ data });
}

/** The session with its transcript in order; `where` is findOwned's (api/http/owned.ts). */
export async function sessionWithTurnsWhere(db: AppServices['db'], where: { id: string; workspaceId: string }) {
  return db.testSession.findFirst({
    where,
    include: { turns: { orderBy: [{ step: 'asc' }, { part: 'asc' }] } },
  });
}
