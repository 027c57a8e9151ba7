import type { RunSql } from '../run-sql';
import type { DialRequestRow } from './call-lines';

/*
 * A call's own statements around its dial (activities/calls/carrier-dialing.ts): what the carrier is told, and the
 * carrier's id recorded. Deciding and giving back its line are lib/calls/call-lines.ts's.
 */

/**
 * The carrier's id recorded once, and the call's campaign's status as it is after that, in one statement: the
 * campaign row is read FOR SHARE, so a stop being committed is waited for and seen (the dialer hangs the call
 * up), and a stop that comes after waits for this commit and finds the id to hang up itself. Undefined: no call of
 * that attempt.
 */
export async function recordProviderCallIdOnce(
  sql: RunSql,
  attemptId: string,
  providerCallId: string,
): Promise<{ id: string; campaignId: string | null; campaignStatus: string | null } | undefined> {
  const [call] = await sql<{ id: string; campaignId: string | null; campaignStatus: string | null }>(
    // The dial's answer means the carrier has queued the call (no queued event is subscribed to). Named: a
    // statement of every dial, parsed and planned once per connection of the pool.
    {
      name: 'record_provider_call_id',
      text: `WITH campaign AS (
       SELECT k.id, k.status::text AS status FROM "Campaign" k
        WHERE k.id = (SELECT "campaignId" FROM "Call" WHERE "attemptId" = $1) FOR SHARE
     )
     UPDATE "Call" c SET "providerCallId" = coalesce(c."providerCallId", $2),
            "carrierStatus" = CASE WHEN c.status = 'dialing' AND c."providerCallId" IS NULL THEN coalesce(c."carrierStatus", 'queued') ELSE c."carrierStatus" END
      WHERE c."attemptId" = $1
     RETURNING c.id::text, c."campaignId"::text, (SELECT status FROM campaign) AS "campaignStatus"`,
    },
    attemptId,
    providerCallId,
  );
  return call;
}

/** What the carrier is told of the attempt's call: the numbers, the agent and the lead; undefined: no such call. */
export async function readDialRequestRow(sql: RunSql, attemptId: string): Promise<DialRequestRow | undefined> {
  const [call] = await sql<DialRequestRow>(
    `SELECT c."fromNumber", c."carrierConnectionId"::text AS "carrierConnectionId", c."testLead", l.id IS NOT NULL AS "hasLead", l.name AS "leadName", l.fields AS "leadFields",
            a.id::text AS "agentId", a.language, a."voiceId", a.script, a."extractionFields"
       FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" LEFT JOIN "Agent" a ON a.id = c."agentId"
      WHERE c."attemptId" = $1`,
    attemptId,
  );
  return call;
}
