import { NOW_UTC } from '../../lib/sql-clock';
import type { RunSql } from '../../lib/run-sql';

/**
 * The SQL of an inbound call (docs/features/carriers/inbound.md): the number called and its agent, the caller's lead, and
 * the call recorded. Named statements: they run on the API's pg pool at every inbound call.
 */

/** The lead an inbound call is recorded on, as the caller's number finds it. */
export interface CallerLead {
  id: string;
  campaignId: string;
  /** A CLASSIC voice campaign's lead: its dial ladder may take the call as its next attempt. */
  laddered: boolean;
  /** The lead waits for its next attempt (queued or dialing, no call of it on now). */
  open: boolean;
  /** The lead's calls so far, by their highest attempt. */
  attempts: number;
  dialLadder: unknown;
}

export interface InboundTarget {
  workspaceId: string;
  agentId: string;
  /** A call already recorded for this CallSid (the carrier asked twice): its attempt. */
  recordedAttemptId: string | null;
  lead: CallerLead | null;
}

/**
 * The number `to` of the connection, routed to a live agent, with the call already recorded for `providerCallId` and
 * the caller's lead: of the workspace's leads with the number `from` (campaigns not deleted), one waiting for its next
 * attempt first, else the newest. Undefined: the number is not the connection's or routes to no live agent.
 */
export async function inboundTarget(
  sql: RunSql,
  call: { connectionId: string; provider: string; providerCallId: string; from: string; to: string },
): Promise<InboundTarget | undefined> {
  const [row] = await sql<InboundTarget>(
    {
      name: 'inbound_call_target',
      text: `WITH number AS (
               SELECT n."workspaceId", n."inboundAgentId" AS "agentId"
                 FROM "PhoneNumber" n JOIN "Agent" a ON a.id = n."inboundAgentId" AND a."deletedAt" IS NULL
                WHERE n.e164 = $5 AND n."carrierConnectionId" = $1::uuid
             ), lead AS (
               SELECT l.id::text, l."campaignId"::text, c.kind::text = 'CLASSIC' AND c.channel::text = 'VOICE' AS laddered,
                      l.status::text IN ('queued', 'dialing')
                        AND NOT EXISTS (SELECT 1 FROM "Call" k WHERE k."leadId" = l.id AND k.status = 'dialing') AS open,
                      (SELECT coalesce(max(k.attempt), 0) FROM "Call" k WHERE k."leadId" = l.id)::int AS attempts,
                      c."dialLadder"
                 FROM number, "Lead" l JOIN "Campaign" c ON c.id = l."campaignId"
                WHERE l."workspaceId" = number."workspaceId" AND l.phone = $4 AND c."deletedAt" IS NULL
                ORDER BY l.status::text IN ('queued', 'dialing') DESC, l."createdAt" DESC, l.id
                LIMIT 1
             )
             SELECT number."workspaceId"::text, number."agentId"::text,
                    (SELECT k."attemptId" FROM "Call" k
                      WHERE k.provider = $2 AND k."providerCallId" = $3 AND k."carrierConnectionId" = $1::uuid
                      LIMIT 1) AS "recordedAttemptId",
                    (SELECT row_to_json(lead) FROM lead) AS lead
               FROM number`,
    },
    call.connectionId,
    call.provider,
    call.providerCallId,
    call.from,
    call.to,
  );
  return row;
}

export interface NewInboundCall {
  workspaceId: string;
  kind: 'campaign' | 'inbound';
  campaignId: string | null;
  leadId: string | null;
  attempt: number;
  attemptId: string;
  provider: string;
  agentId: string;
  from: string;
  to: string;
  connectionId: string;
  providerCallId: string;
  /** The outcomes on which the call's end settles its lead (Call.settlesLeadOn). */
  settlesLeadOn: readonly string[];
  /** The workflow its end is signalled to: the one watching it (inboundCallWorkflowId). */
  workflowId: string;
}

/**
 * Records an inbound call as on (dialing, the carrier's in-progress, a person on the line), once per attempt id: null
 * when the attempt already has a call. A call of a lead holds a line of its campaign while it lasts, as every call of
 * the campaign does (the end gives it back: lib/calls/call-end.ts); the lead's place in the line queue for this very
 * attempt is left, and a line handed to it there is the call's. The campaign row is locked first, as takeLine does
 * (lib/calls/call-lines.ts).
 */
export async function insertInboundCall(sql: RunSql, call: NewInboundCall): Promise<string | null> {
  const [row] = await sql<{ id: string | null }>(
    {
      name: 'inbound_call_insert',
      text: `WITH campaign AS (
               SELECT id FROM "Campaign" WHERE id = $3::uuid FOR UPDATE
             ), call AS (
               INSERT INTO "Call" (id, "workspaceId", kind, direction, "campaignId", "leadId", attempt, "attemptId",
                                   provider, status, "startedAt", "agentId", "fromNumber", "toNumber",
                                   "carrierConnectionId", "providerCallId", "carrierStatus", "answeredBy",
                                   "lastEventAt", "settlesLeadOn", "workflowId")
               SELECT gen_random_uuid(), $1::uuid, $2, 'inbound', (SELECT id FROM campaign), $4::uuid, $5, $6, $7,
                      'dialing', ${NOW_UTC}, $8::uuid, $9, $10, $11::uuid, $12, 'in-progress', 'human', ${NOW_UTC},
                      $13::text[], $14
               ON CONFLICT ("attemptId") DO NOTHING
               RETURNING id, "campaignId"
             ), queued AS (
               DELETE FROM "LineQueue" q USING call WHERE q."attemptId" = $6 RETURNING q."grantedAt" IS NOT NULL AS granted
             ), line AS (
               UPDATE "Campaign" k SET "callsInFlight" = k."callsInFlight" + 1 FROM call
                WHERE k.id = call."campaignId" AND NOT coalesce((SELECT bool_or(granted) FROM queued), false)
             )
             SELECT (SELECT id::text FROM call) AS id`,
    },
    call.workspaceId,
    call.kind,
    call.campaignId,
    call.leadId,
    call.attempt,
    call.attemptId,
    call.provider,
    call.agentId,
    call.from,
    call.to,
    call.connectionId,
    call.providerCallId,
    call.settlesLeadOn,
    call.workflowId,
  );
  return row?.id ?? null;
}

/** An ended inbound call that had a conversation: its call intelligence is to be started. */
export async function endedInboundCall(
  sql: RunSql,
  call: { connectionId: string; provider: string; providerCallId: string },
): Promise<{ id: string; outcome: string } | undefined> {
  const [row] = await sql<{ id: string; outcome: string }>(
    {
      name: 'inbound_call_ended',
      text: `SELECT id::text, outcome FROM "Call"
              WHERE provider = $2 AND "providerCallId" = $3 AND "carrierConnectionId" = $1::uuid
                AND direction = 'inbound' AND status = 'ended'
              LIMIT 1`,
    },
    call.connectionId,
    call.provider,
    call.providerCallId,
  );
  return row;
}

/** The attempt id of the call recorded for the carrier's call id on the connection; null: none. */
export async function recordedInboundAttempt(
  sql: RunSql,
  call: { connectionId: string; provider: string; providerCallId: string },
): Promise<string | null> {
  const [row] = await sql<{ attemptId: string }>(
    {
      name: 'inbound_call_attempt',
      text: `SELECT "attemptId" FROM "Call"
              WHERE provider = $2 AND "providerCallId" = $3 AND "carrierConnectionId" = $1::uuid AND direction = 'inbound'
              LIMIT 1`,
    },
    call.connectionId,
    call.provider,
    call.providerCallId,
  );
  return row?.attemptId ?? null;
}
