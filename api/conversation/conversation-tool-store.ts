import { NOW_UTC } from '../../lib/sql-clock';
import type { ToolOutcome } from '../../lib/calls/call-outcomes';
import type { RunSql } from '../../lib/run-sql';
import { personNumberSql } from '../../lib/calls/person-number';

/**
 * The conversation tools' SQL (docs/features/conversation/tools.md). Every write is on a call still on (status
 * dialing): a tool that runs after the call's end changes nothing, and the call's outcome is decided by the statement
 * that ends it (lib/calls/call-end.ts, Call.conversationOutcome).
 */

/** What the tools need to know of a call: whose it is, whom it calls, and its campaign's calling window. */
export interface ToolCallRow {
  id: string;
  workspaceId: string;
  /** campaign or test (a test call's tools act on nothing outside the call). */
  kind: string;
  toNumber: string | null;
  language: string;
  transferNumber: string | null;
  callingWindow: unknown;
}

export async function toolCallOf(sql: RunSql, callId: string): Promise<ToolCallRow | null> {
  const [row] = await sql<ToolCallRow>(
    {
      name: 'conversation_tool_call',
      text: `SELECT c.id::text, c."workspaceId"::text, c.kind, ${personNumberSql('c', 'l.phone')} AS "toNumber",
                    coalesce(a.language, 'en') AS language, a."transferNumber", k."callingWindow"
               FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" LEFT JOIN "Agent" a ON a.id = c."agentId"
               LEFT JOIN "Campaign" k ON k.id = c."campaignId"
              WHERE c.id = $1::uuid`,
    },
    callId,
  );
  return row ?? null;
}

/**
 * The call's outcome becomes `outcome` when it ends answered (callbackAt: when the lead asked to be called back), and
 * with opted_out the number joins its workspace's Do-Not-Call list (source spoken_opt_out, this call), in the same
 * statement: at once, for every later push and every attempt not yet dialed. Answers whether the call was still on,
 * and the number this statement listed (null: none, or listed before), whose waiting ladders are then told
 * (lib/temporal/do-not-call.ts).
 */
export async function markConversationOutcome(
  sql: RunSql,
  callId: string,
  outcome: ToolOutcome,
  options: { callbackAt?: Date | null; doNotCall?: boolean } = {},
): Promise<{ marked: boolean; listed: { workspaceId: string; phone: string } | null }> {
  const [row] = await sql<{ marked: boolean; listed: { workspaceId: string; phone: string } | null }>(
    {
      name: 'conversation_tool_outcome',
      text: `WITH marked AS (
               UPDATE "Call" c SET "conversationOutcome" = $2, "callbackAt" = $3::timestamptz AT TIME ZONE 'UTC'
                WHERE c.id = $1::uuid AND c.status = 'dialing'
                RETURNING c.id, c."workspaceId",
                          ${personNumberSql('c', '(SELECT l.phone FROM "Lead" l WHERE l.id = c."leadId")')} AS "toNumber"
             ), listed AS (
               INSERT INTO "DoNotCall" ("workspaceId", phone, source, "callId", "createdAt")
               SELECT "workspaceId", "toNumber", 'spoken_opt_out', id, ${NOW_UTC} FROM marked
                WHERE $4::boolean AND "toNumber" IS NOT NULL
               ON CONFLICT DO NOTHING
               RETURNING "workspaceId"::text AS "workspaceId", phone
             )
             SELECT EXISTS (SELECT 1 FROM marked) AS marked, (SELECT row_to_json(listed) FROM listed) AS listed`,
    },
    callId,
    outcome,
    options.callbackAt?.toISOString() ?? null,
    options.doNotCall ?? false,
  );
  return { marked: row?.marked ?? false, listed: row?.listed ?? null };
}

/**
 * transfer_to_human: the call is to be handed to the agent's transfer number when its conversation ends, in the agent's
 * transfer mode (cold or warm) as it is now, with the summary a warm transfer's human hears. The first request's
 * mode and summary stay.
 */
export async function requestTransfer(sql: RunSql, callId: string, summary: string | null): Promise<boolean> {
  const rows = await sql(
    {
      name: 'conversation_tool_transfer',
      text: `UPDATE "Call" c SET "transferRequestedAt" = coalesce(c."transferRequestedAt", now() AT TIME ZONE 'UTC'),
                    "transferMode" = coalesce(c."transferMode",
                                              (SELECT a."transferMode" FROM "Agent" a WHERE a.id = c."agentId"), 'cold'),
                    "transferSummary" = CASE WHEN c."transferRequestedAt" IS NULL THEN $2 ELSE c."transferSummary" END
              WHERE c.id = $1::uuid AND c.status = 'dialing' RETURNING 1`,
    },
    callId,
    summary,
  );
  return rows.length > 0;
}

/**
 * How the transfer went (Call.transferStatus): answered or unanswered, decided once. Answers whether this request
 * decided it: a webhook delivered again, or the other of two racing ones, finds it decided and commands nothing.
 */
export async function settleTransfer(sql: RunSql, callId: string, status: 'answered' | 'unanswered'): Promise<boolean> {
  const rows = await sql(
    {
      name: 'conversation_tool_transfer_settled',
      text: `UPDATE "Call" SET "transferStatus" = $2
              WHERE id = $1::uuid AND status = 'dialing' AND "transferStatus" IS NULL RETURNING 1`,
    },
    callId,
    status,
  );
  return rows.length > 0;
}

/** A call whose conversation ended, as its transfer needs it (found by attempt and connection, as every carrier route). */
export interface TransferCallRow {
  id: string;
  /** dialing while the call is on. */
  status: string;
  /** The carrier's id of the lead's call (Telnyx: its call_control_id, which the human's leg's webhooks do not carry). */
  providerCallId: string | null;
  /** What the tools marked so far (transferred once the human answered). */
  conversationOutcome: string | null;
  transferRequestedAt: Date | null;
  /** cold or warm, as the tool recorded it (null: no transfer asked). */
  transferMode: string | null;
  transferSummary: string | null;
  /** answered or unanswered once decided (settleTransfer); null while it rings. */
  transferStatus: string | null;
  fromNumber: string | null;
  transferNumber: string | null;
  voiceId: string | null;
  language: string | null;
}

export async function transferCallOf(
  sql: RunSql,
  attemptId: string,
  connectionId: string,
): Promise<TransferCallRow | null> {
  const [row] = await sql<TransferCallRow>(
    {
      name: 'conversation_tool_transfer_call',
      text: `SELECT c.id::text, c.status, c."providerCallId", c."conversationOutcome", c."transferRequestedAt", c."transferMode",
                    c."transferSummary", c."transferStatus", c."fromNumber",
                    a."transferNumber", a."voiceId", a.language
               FROM "Call" c LEFT JOIN "Agent" a ON a.id = c."agentId"
              WHERE c."attemptId" = $1 AND c."carrierConnectionId" = $2::uuid`,
    },
    attemptId,
    connectionId,
  );
  return row ?? null;
}
