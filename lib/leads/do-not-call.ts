import type { RunSql } from '../run-sql';
import { NOW_UTC } from '../sql-clock';
import { LEAD_STATUS_OPEN_SQL } from './lead-final-status';

/**
 * The workspace's Do-Not-Call list (docs/features/leads.md#the-do-not-call-list): the numbers no call and no message
 * goes to, each with how it came to be listed. Every path that lists a number writes through `listOnDoNotCall`, and
 * every send path reads `isOnDoNotCall` (or its own statement's equivalent) immediately before it sends.
 */

/**
 * How a number came to be listed: api (POST /do-not-call), spoken_opt_out (the person said so on a call: a dialogue
 * engine's opt_out tool or the script walk), whatsapp_reply (an opt-out keyword or button reply), call_intelligence
 * (the call's transcript read after the call); unknown for the numbers listed before provenance was recorded.
 */
export const DO_NOT_CALL_SOURCES = ['api', 'spoken_opt_out', 'whatsapp_reply', 'call_intelligence', 'unknown'] as const;
export type DoNotCallSource = (typeof DO_NOT_CALL_SOURCES)[number];

export interface DoNotCallListing {
  workspaceId: string;
  phone: string;
  source: Exclude<DoNotCallSource, 'unknown'>;
  /** The call the person opted out on (spoken_opt_out, call_intelligence). */
  callId?: string | null;
  /** The inbound WhatsApp message that opted out (whatsapp_reply). */
  messageId?: string | null;
}

export interface DoNotCallEntry {
  phone: string;
  source: DoNotCallSource;
  callId: string | null;
  messageId: string | null;
  /** When the number was listed (ISO 8601, UTC). */
  listedAt: string;
}

/**
 * Lists the number, unless it is listed already (the first listing's provenance is kept: it says when and how the
 * person first asked). Answers whether it was new to the list.
 */
export async function listOnDoNotCall(sql: RunSql, listing: DoNotCallListing): Promise<boolean> {
  const rows = await sql<{ listed: boolean }>(
    {
      name: 'do_not_call_list',
      text: `INSERT INTO "DoNotCall" ("workspaceId", phone, source, "callId", "messageId", "createdAt")
             VALUES ($1::uuid, $2, $3, $4::uuid, $5::uuid, ${NOW_UTC})
             ON CONFLICT DO NOTHING
             RETURNING true AS listed`,
    },
    listing.workspaceId,
    listing.phone,
    listing.source,
    listing.callId ?? null,
    listing.messageId ?? null,
  );
  return rows.length > 0;
}

/** Whether the number is on the workspace's list. */
export async function isOnDoNotCall(sql: RunSql, workspaceId: string, phone: string): Promise<boolean> {
  const rows = await sql<{ one: number }>(
    {
      name: 'do_not_call_listed',
      text: `SELECT 1 AS one FROM "DoNotCall" WHERE "workspaceId" = $1::uuid AND phone = $2`,
    },
    workspaceId,
    phone,
  );
  return rows.length > 0;
}

/** The number's entry on the workspace's list, with its provenance; null when it is not listed. */
export async function doNotCallEntryOf(
  sql: RunSql,
  workspaceId: string,
  phone: string,
): Promise<DoNotCallEntry | null> {
  const [row] = await sql<{
    phone: string;
    source: DoNotCallSource;
    callId: string | null;
    messageId: string | null;
    listedAt: Date;
  }>(
    `SELECT phone, source, "callId"::text, "messageId"::text, "createdAt" AT TIME ZONE 'UTC' AS "listedAt"
       FROM "DoNotCall" WHERE "workspaceId" = $1::uuid AND phone = $2`,
    workspaceId,
    phone,
  );
  return row ? { ...row, listedAt: row.listedAt.toISOString() } : null;
}

/**
 * The most running dial ladders one listing tells (lib/temporal/do-not-call.ts): a number is rarely on more open
 * leads than this; those past it end at their next attempt, which reads the list first (docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
 */
export const OPTED_OUT_LADDERS_TOLD = 1_000;

/**
 * The workflow ids of the running dial ladders of the workspace's open CLASSIC voice leads whose number is one of
 * these (Lead(workspaceId, phone) index), at most `limit`: the leads not yet started (no workflow) find the list at
 * their first attempt. A journey's call node and a WHATSAPP lead are not ladders of their own.
 */
export async function openLaddersOfNumbers(
  sql: RunSql,
  workspaceId: string,
  phones: readonly string[],
  limit: number = OPTED_OUT_LADDERS_TOLD,
): Promise<string[]> {
  if (!phones.length) return [];
  const rows = await sql<{ workflowId: string }>(
    {
      name: 'do_not_call_open_ladders',
      text: `SELECT l."workflowId" FROM "Lead" l JOIN "Campaign" c ON c.id = l."campaignId"
              WHERE l."workspaceId" = $1::uuid AND l.phone = ANY($2::text[]) AND ${LEAD_STATUS_OPEN_SQL('l')}
                AND l."workflowStartedAt" IS NOT NULL AND c.kind = 'CLASSIC' AND c.channel <> 'WHATSAPP'
              LIMIT $3`,
    },
    workspaceId,
    [...phones],
    limit,
  );
  return rows.map((row) => row.workflowId);
}
