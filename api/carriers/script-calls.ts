import type { ScriptCall } from '../../lib/carriers/script-walk';
import { redactedTurnsOfCall } from '../../lib/compliance/compliance-store';
import type { ConversationTurn } from '../../lib/dialogue/engine';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { testCallTimeLimitMs } from '../../lib/credits/test-call-billing';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';

/**
 * What the carriers' routes share about the call a request names (docs/features/carriers.md): that it was placed
 * through the connection that signed the request, its agent and lead for the script walk, and the turns a step of the
 * walk stores. Twilio's routes (twilio-callbacks.ts) and Telnyx's (telnyx-webhooks.ts) both read and write through here.
 */

/** A call's row as the script walk reads it. */
export interface ScriptCallRow {
  id: string;
  workspaceId: string;
  /** campaign or test: a test call talks only the minutes its hold covers (paidTimeLeftMs). */
  kind: string;
  status: string;
  voicemailLeftAt: Date | null;
  agent:
    | (NonNullable<ScriptCall['agent']> & {
        hints: string[] | null;
        id: string;
        /** For a conversation's engine (docs/features/conversation-relay.md): a model's prompt, the first words. */
        instructions: string | null;
        firstMessage: string | null;
      })
    | null;
  leadName: string | null;
  leadFields: unknown;
  testLead: unknown;
  /** The workspace's disclosure (docs/features/compliance.md#disclosure); null: none. */
  disclosure: string | null;
}

/**
 * The call of the attempt, placed through that very connection, with its agent (its dictionaries' terms as hints) and
 * its lead: a request signed by one workspace's account for another's call (or a call of another connection) is
 * unknown_call, and nothing changes.
 */
export async function scriptCallOf(
  services: AppServices,
  attemptId: string,
  connectionId: string,
): Promise<ScriptCallRow> {
  const [call] = await poolSql(services.sql)<ScriptCallRow>(
    {
      name: 'carrier_script_call',
      text: `SELECT c.id::text, c."workspaceId"::text, c.kind, c.status, c."voicemailLeftAt",
                    CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('id', a.id, 'language', a.language, 'voiceId', a."voiceId",
                      'script', a.script, 'voicemailMessage', a."voicemailMessage",
                      'instructions', a.instructions, 'firstMessage', a."firstMessage",
                      'hints', (SELECT coalesce(array_agg(t.term ORDER BY ad.position, t.ord), '{}')
                                  FROM "AgentDictionary" ad JOIN "Dictionary" d ON d.id = ad."dictionaryId",
                                       unnest(d.terms) WITH ORDINALITY AS t(term, ord)
                                 WHERE ad."agentId" = a.id)) END AS agent,
                    l.name AS "leadName", l.fields AS "leadFields", c."testLead", cs.disclosure
               FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" LEFT JOIN "Agent" a ON a.id = c."agentId"
                    LEFT JOIN "ComplianceSettings" cs ON cs."workspaceId" = c."workspaceId"
              WHERE c."attemptId" = $1 AND c."carrierConnectionId" = $2::uuid`,
    },
    attemptId,
    connectionId,
  );
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  return call;
}

/**
 * The walk's view of the call: its agent (hints never null), its lead (a test call's from its request) and its
 * workspace's disclosure.
 */
export function scriptCallOfRow(call: ScriptCallRow): ScriptCall {
  const testLead = call.testLead as { name?: string | null; fields?: Record<string, unknown> } | null;
  return {
    agent: call.agent && { ...call.agent, hints: call.agent.hints ?? [] },
    lead: {
      name: call.leadName ?? testLead?.name ?? null,
      fields: ((call.leadFields ?? testLead?.fields) as Record<string, unknown> | null) ?? {},
    },
    disclosure: call.disclosure,
  };
}

/**
 * How much of a test call's paid time is left (docs/features/test-calls.md#length), in the call's time: the minutes its
 * hold covers (the limit it was dialed with) less the time since the answer, counted from the carrier's in-progress
 * event or the call's first stored turn (the answer step's), whichever is earlier, on the database's clock; nothing
 * of either yet: the answer is now. Null: no paid limit (a campaign's call, a test call recorded before billing).
 * Real time is scaled as a minute is (testMinuteMs: tests on a fast carrier twin).
 */
export async function paidTimeLeftMs(services: AppServices, call: ScriptCallRow): Promise<number | null> {
  if (call.kind !== 'test') return null;
  const sql = poolSql(services.sql);
  const limitMs = await testCallTimeLimitMs(sql, { workspaceId: call.workspaceId, callId: call.id });
  if (limitMs === undefined) return null;
  const [row] = await sql<{ elapsedMs: number | null }>(
    {
      name: 'carrier_call_talk_elapsed',
      text: `SELECT greatest(0, extract(epoch FROM (now() AT TIME ZONE 'UTC') - least(
                 (SELECT min(e."occurredAt") FROM "CallEvent" e WHERE e."callId" = $1::uuid AND e.status = 'in-progress'),
                 (SELECT min(t."createdAt") FROM "CallTurn" t WHERE t."callId" = $1::uuid))) * 1000)::float8 AS "elapsedMs"`,
    },
    call.id,
  );
  return limitMs - (row?.elapsedMs ?? 0) / minuteScaleOf(services);
}

/** Real time per call time: 1, or less on a fast carrier twin (testMinuteMs). */
export const minuteScaleOf = (services: AppServices) => (services.testMinuteMs ?? 60_000) / 60_000;

/**
 * Stores a step's turns once per call, step and part, redacted first by the rules of the call's workspace
 * (docs/features/compliance.md#redaction: every transcript write goes through lib/compliance/redaction.ts redactTurns) (a replayed or out-of-order request adds and moves nothing), each
 * timed from the call's first stored turn on the database's clock; `leftMessage` marks the call voicemailLeftAt (its
 * end is then voicemail_left). Answers whether this stored anything (false: the step was stored before).
 */
export async function storeScriptTurns(
  services: AppServices,
  callId: string,
  turns: readonly ConversationTurn[],
  leftMessage: boolean,
): Promise<boolean> {
  const [row] = await poolSql(services.sql)<{ stored: number }>(
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
    JSON.stringify(await redactedTurnsOfCall(poolSql(services.sql), callId, turns)),
    leftMessage,
  );
  return (row?.stored ?? 0) > 0;
}

/**
 * An interrupted answer (docs/features/conversation-relay.md#the-script-engine): the agent turn becomes what the lead heard
 * of it; a turn the lead heard nothing of (text empty) is removed.
 */
export async function trimAgentTurn(
  services: AppServices,
  callId: string,
  turn: { step: number; part: number; text: string },
): Promise<void> {
  await poolSql(services.sql)(
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
