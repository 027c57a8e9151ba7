import { NOW_UTC } from '../../lib/sql-clock';
import type { ConversationEngine } from '../../lib/conversation/conversation-engine';
import type { ScriptCall } from '../../lib/conversation/script-walk';
import type { RunSql } from '../../lib/run-sql';

/**
 * The carriers' routes' SQL about the calls they serve (docs/features/carriers.md): the call a request names, the
 * turns a step of the script walk stores, Telnyx's question waits, the relay's claim of a call and Twilio's voicemail
 * redirect. Every statement is named: they run on the API's pg pool, on every carrier request.
 */

/** A call's row as the script walk reads it. */
export interface ScriptCallRow {
  id: string;
  workspaceId: string;
  /** campaign or test: a test call talks only the minutes its hold covers (paidTimeLeftMs). */
  kind: string;
  /** outbound, or inbound: a person called a number of the workspace (docs/features/carriers/inbound.md). */
  direction: string;
  status: string;
  voicemailLeftAt: Date | null;
  agent:
    | (NonNullable<ScriptCall['agent']> & {
        hints: string[] | null;
        id: string;
        /** For a conversation's engine (docs/features/conversation/relay.md): a model's prompt, the first words. */
        instructions: string | null;
        firstMessage: string | null;
        /** The agent's own choice of engine (lib/conversation/conversation-engine.ts). */
        conversationEngine: ConversationEngine;
      })
    | null;
  leadName: string | null;
  leadFields: unknown;
  testLead: unknown;
  /** The workspace's disclosure (docs/features/compliance.md#disclosure); null: none. */
  disclosure: string | null;
  /** Whether the workspace records its calls (docs/features/recordings.md): the disclosure then announces it. */
  recordingEnabled: boolean;
  /** The call's carrier (twilio, twilio-twin, telnyx, telnyx-twin). */
  provider: string;
  /** The carrier's id of the call (Twilio's CallSid); null until the carrier gave it. */
  providerCallId: string | null;
}

/** The call of the attempt, placed through that very connection, with its agent and lead; undefined: none. */
export async function scriptCallRow(sql: RunSql, attemptId: string, connectionId: string) {
  const [call] = await sql<ScriptCallRow>(
    {
      name: 'carrier_script_call',
      text: `SELECT c.id::text, c."workspaceId"::text, c.kind, c.direction, c.status, c."voicemailLeftAt",
                    CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('id', a.id, 'language', a.language, 'voiceId', a."voiceId",
                      'script', a.script, 'voicemailMessage', a."voicemailMessage",
                      'instructions', a.instructions, 'firstMessage', a."firstMessage",
                      'transferNumber', a."transferNumber", 'conversationEngine', a."conversationEngine",
                      'hints', (SELECT coalesce(array_agg(t.term ORDER BY ad.position, t.ord), '{}')
                                  FROM "AgentDictionary" ad JOIN "Dictionary" d ON d.id = ad."dictionaryId",
                                       unnest(d.terms) WITH ORDINALITY AS t(term, ord)
                                 WHERE ad."agentId" = a.id)) END AS agent,
                    l.name AS "leadName", l.fields AS "leadFields", c."testLead", cs.disclosure,
                    coalesce(cs."recordingEnabled", false) AS "recordingEnabled", c."providerCallId", c.provider
               FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" LEFT JOIN "Agent" a ON a.id = c."agentId"
                    LEFT JOIN "ComplianceSettings" cs ON cs."workspaceId" = c."workspaceId"
              WHERE c."attemptId" = $1 AND c."carrierConnectionId" = $2::uuid`,
    },
    attemptId,
    connectionId,
  );
  return call;
}

/**
 * The call time since the answer, on the database's clock: from the carrier's in-progress event or the call's first
 * stored turn, whichever is earlier; null: neither yet.
 */
export async function talkElapsedMs(sql: RunSql, callId: string): Promise<number | null> {
  const [row] = await sql<{ elapsedMs: number | null }>(
    {
      name: 'carrier_call_talk_elapsed',
      text: `SELECT greatest(0, extract(epoch FROM (now() AT TIME ZONE 'UTC') - least(
                 (SELECT min(e."occurredAt") FROM "CallEvent" e WHERE e."callId" = $1::uuid AND e.status = 'in-progress'),
                 (SELECT min(t."createdAt") FROM "CallTurn" t WHERE t."callId" = $1::uuid))) * 1000)::float8 AS "elapsedMs"`,
    },
    callId,
  );
  return row?.elapsedMs ?? null;
}

/**
 * Stores a step's (redacted) turns once per call, step and part, each timed from the call's first stored turn on the
 * database's clock; `leftMessage` marks the call voicemailLeftAt. Answers whether this stored anything.
 */
export async function insertScriptTurns(
  sql: RunSql,
  callId: string,
  redactedTurns: unknown,
  leftMessage: boolean,
): Promise<boolean> {
  const [row] = await sql<{ stored: number }>(
    {
      name: 'carrier_script_turns',
      text: `WITH now AS (SELECT (now() AT TIME ZONE 'UTC') AS at),
                  base AS (SELECT min("createdAt") AS at FROM "CallTurn" WHERE "callId" = $1::uuid),
                  stored AS (
               INSERT INTO "CallTurn" ("callId", step, part, speaker, text, confidence, tool, "offsetMs", "createdAt")
               SELECT $1::uuid, t.step, t.part, t.speaker, t.text, t.confidence, t.tool,
                      greatest(0, round(extract(epoch FROM now.at - coalesce(base.at, now.at)) * 1000))::int, now.at
                 FROM jsonb_to_recordset($2::jsonb) AS t(step int, part int, speaker text, text text, confidence float8, tool jsonb),
                      now, base
               ON CONFLICT ("callId", step, part) DO NOTHING
               RETURNING 1),
                  marked AS (
             UPDATE "Call" SET "voicemailLeftAt" = (SELECT at FROM now)
              WHERE $3::boolean AND id = $1::uuid AND "voicemailLeftAt" IS NULL
              RETURNING 1)
             SELECT (SELECT count(*) FROM stored)::int AS stored`,
    },
    callId,
    JSON.stringify(redactedTurns),
    leftMessage,
  );
  return (row?.stored ?? 0) > 0;
}

/** The agent turn becomes `text`; with text empty it is removed. */
export async function trimAgentTurnRow(
  sql: RunSql,
  callId: string,
  turn: { step: number; part: number; text: string },
): Promise<void> {
  await sql(
    {
      name: 'carrier_trim_turn',
      text: `WITH trimmed AS (
               UPDATE "CallTurn" SET text = $4 WHERE "callId" = $1::uuid AND step = $2 AND part = $3 AND speaker = 'agent' AND $4 <> ''
             )
             DELETE FROM "CallTurn" WHERE "callId" = $1::uuid AND step = $2 AND part = $3 AND speaker = 'agent' AND $4 = ''`,
    },
    callId,
    turn.step,
    turn.part,
    turn.text,
  );
}

/** When the event was recorded (Telnyx's call.answered: the talk time's start); null: not yet. */
export async function callEventAt(sql: RunSql, provider: string, eventId: string): Promise<Date | null> {
  const [row] = await sql<{ at: Date }>(
    {
      name: 'telnyx_call_answered_at',
      text: `SELECT ("occurredAt" AT TIME ZONE 'UTC') AS at FROM "CallEvent" WHERE provider = $1 AND "eventId" = $2`,
    },
    provider,
    eventId,
  );
  return row?.at ?? null;
}

/**
 * Arms (or moves later) the wait for question `step`'s answer, due `timeoutSeconds` from now, only forward and only
 * while the question has no answer stored (telnyx-question-waits.ts). Answers whether a wait was armed or moved.
 */
export async function armQuestionWaitRow(
  sql: RunSql,
  callId: string,
  step: number,
  timeoutSeconds: number,
): Promise<boolean> {
  const rows = await sql<{ step: number }>(
    {
      name: 'telnyx_question_wait_arm',
      text: `INSERT INTO "CallQuestionWait" ("callId", step, "dueAt")
             SELECT $1::uuid, $2, ${NOW_UTC} + make_interval(secs => $3)
              WHERE NOT EXISTS (SELECT 1 FROM "CallTurn" t WHERE t."callId" = $1::uuid AND t.step = $2 AND t.part = 0)
             ON CONFLICT ("callId") DO UPDATE
                SET step = EXCLUDED.step,
                    "dueAt" = greatest(CASE WHEN "CallQuestionWait".step = EXCLUDED.step THEN "CallQuestionWait"."dueAt" END,
                                       EXCLUDED."dueAt")
              WHERE "CallQuestionWait".step < EXCLUDED.step
                 OR ("CallQuestionWait".step = EXCLUDED.step AND "CallQuestionWait"."dueAt" IS NOT NULL)
             RETURNING step`,
    },
    callId,
    step,
    timeoutSeconds,
  );
  return rows.length > 0;
}

export interface ClaimedWait {
  callId: string;
  step: number;
  /** The call is on and the question has no answer: to walk. Otherwise the wait was just cleared. */
  unanswered: boolean;
  attemptId: string;
  connectionId: string | null;
  callControlId: string | null;
}

export interface Claim {
  waits: ClaimedWait[];
  /** In how long the next wait not yet due falls due, on the database's clock; null: none is armed. */
  nextDueInMs: number | null;
}

/**
 * Claims the waits past due, at most `limit`: each one whose call is on and whose question has no answer is leased
 * (due again `leaseSeconds` from now) and answered to be walked; the others (answered, or the call ended) are cleared.
 * One statement: the rows are locked SKIP LOCKED, so a wait is claimed by one process only. It also reads when the
 * earliest wait not yet due falls due (one row with no wait when none was claimed).
 */
export async function claimDueQuestionWaits(sql: RunSql, limit: number, leaseSeconds: number): Promise<Claim> {
  const rows = await sql<Partial<ClaimedWait> & { nextDueInMs: number | null }>(
    {
      name: 'telnyx_question_waits_claim',
      text: `WITH due AS (
               SELECT w."callId",
                      c.status = 'dialing' AND NOT EXISTS (
                        SELECT 1 FROM "CallTurn" t WHERE t."callId" = w."callId" AND t.step = w.step AND t.part = 0
                      ) AS unanswered
                 FROM "CallQuestionWait" w JOIN "Call" c ON c.id = w."callId"
                WHERE w."dueAt" <= ${NOW_UTC}
                ORDER BY w."dueAt" LIMIT $1
                  FOR UPDATE OF w SKIP LOCKED),
             claimed AS (
               UPDATE "CallQuestionWait" w
                  SET "dueAt" = CASE WHEN due.unanswered THEN ${NOW_UTC} + make_interval(secs => $2) END
                 FROM due, "Call" c
                WHERE w."callId" = due."callId" AND c.id = w."callId"
               RETURNING w."callId"::text AS "callId", w.step, due.unanswered, c."attemptId",
                         c."carrierConnectionId"::text AS "connectionId", c."providerCallId" AS "callControlId"),
             next AS (
               SELECT (EXTRACT(EPOCH FROM min("dueAt") - ${NOW_UTC}) * 1000)::float8 AS "nextDueInMs"
                 FROM "CallQuestionWait" WHERE "dueAt" > ${NOW_UTC})
             SELECT claimed.*, next."nextDueInMs" FROM next LEFT JOIN claimed ON true`,
    },
    limit,
    leaseSeconds,
  );
  return {
    waits: rows.filter((row): row is ClaimedWait & { nextDueInMs: number | null } => row.callId != null),
    nextDueInMs: rows[0]?.nextDueInMs ?? null,
  };
}

/** The claimed wait is cleared, unless a later question's wait has replaced it meanwhile. */
export async function releaseQuestionWait(sql: RunSql, callId: string, step: number): Promise<void> {
  await sql(
    {
      name: 'telnyx_question_wait_release',
      text: `UPDATE "CallQuestionWait" SET "dueAt" = NULL WHERE "callId" = $1::uuid AND step = $2`,
    },
    callId,
    step,
  );
}

export interface RelayCall {
  id: string;
  providerCallId: string | null;
  workspaceId: string;
  kind: string;
}

/** Marks the call's socket taken, if the call is on and had none: the one conversation of the call. */
export async function claimRelayCall(sql: RunSql, callId: string): Promise<RelayCall | null> {
  const [claimed] = await sql<RelayCall>(
    {
      name: 'relay_call_claim',
      text: `UPDATE "Call" SET "relaySocketAt" = (now() AT TIME ZONE 'UTC')
              WHERE id = $1::uuid AND status = 'dialing' AND "relaySocketAt" IS NULL
             RETURNING id::text, "providerCallId", "workspaceId"::text, kind::text`,
    },
    callId,
  );
  return claimed ?? null;
}

/** The call was redirected to its voicemail step (a machine answered: Call.voicemailRedirectAt). */
export async function isRedirectedToVoicemail(sql: RunSql, callId: string): Promise<boolean> {
  const [row] = await sql<{ redirected: boolean }>(
    {
      name: 'relay_call_redirected',
      text: `SELECT "voicemailRedirectAt" IS NOT NULL AS redirected FROM "Call" WHERE id = $1::uuid`,
    },
    callId,
  );
  return row?.redirected ?? false;
}

/**
 * The call of the attempt, still on and with no message left nor redirect yet, marked redirected to its voicemail step
 * in the statement that finds it: of two deliveries of one callback at once, one gets the call's id.
 */
export async function markVoicemailRedirect(sql: RunSql, attemptId: string, connectionId: string) {
  const [live] = await sql<{ id: string }>(
    {
      name: 'twilio_call_awaiting_voicemail',
      text: `UPDATE "Call" SET "voicemailRedirectAt" = (now() AT TIME ZONE 'UTC')
              WHERE "attemptId" = $1 AND "carrierConnectionId" = $2::uuid
                AND status = 'dialing' AND "voicemailLeftAt" IS NULL AND "voicemailRedirectAt" IS NULL
             RETURNING id::text`,
    },
    attemptId,
    connectionId,
  );
  return live;
}

/** The redirect did not happen: the callback's retry is to redirect again. */
export async function clearVoicemailRedirect(sql: RunSql, callId: string): Promise<void> {
  await sql(
    {
      name: 'twilio_call_voicemail_redirect_failed',
      text: `UPDATE "Call" SET "voicemailRedirectAt" = NULL WHERE id = $1::uuid`,
    },
    callId,
  );
}
