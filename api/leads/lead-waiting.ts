import type { AppServices } from '../app-services';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';

/**
 * What a CLASSIC lead between attempts waits for, as its ladder records it in "Lead"."waitingFor"
 * (docs/features/dial-ladder.md#what-a-lead-waits-for).
 */
export const WAITING_FOR = ['rung', 'calling_window', 'line', 'campaign'] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];

/** The two waits that end at a known time, "Lead"."nextAttemptAt". */
const TIMED: ReadonlySet<string> = new Set<WaitingFor>(['rung', 'calling_window']);

const FINISHED: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** A result's `waiting` (leadWaitingSchema in results-routes.ts). */
export interface LeadWaitingView {
  for: WaitingFor;
  nextAttemptAt: string | null;
  linePosition: number | null;
}

/** The columns of a lead that tell what it waits for, and its campaign's kind and channel. */
export interface WaitingLead {
  id: string;
  status: string;
  waitingFor: string | null;
  nextAttemptAt: Date | null;
  campaign: { kind: 'CLASSIC' | 'JOURNEY'; channel: string };
}

/** Waits these columns can show: a dial-ladder lead's (only the ladder writes them), and none once finished. */
function shownWait(lead: WaitingLead): WaitingFor | null {
  if (leadWorkflowKind(lead.campaign) !== 'CLASSIC' || FINISHED.has(lead.status)) return null;
  return isWaitingFor(lead.waitingFor) ? lead.waitingFor : null;
}

const isWaitingFor = (value: string | null): value is WaitingFor =>
  value !== null && (WAITING_FOR as readonly string[]).includes(value);

/**
 * What the lead waits for, or null: on a call, being prepared, finished, or not a dial-ladder lead (a
 * JOURNEY run or a WHATSAPP message never waits in these columns). A finished lead waits for nothing
 * whatever its row still says, a time is shown only for the waits that end at one, and a place only for
 * a lead still in its campaign's line queue (`positions`, from linePositions).
 */
export function leadWaitingView(lead: WaitingLead, positions: ReadonlyMap<string, number>): LeadWaitingView | null {
  const waitingFor = shownWait(lead);
  if (!waitingFor) return null;
  return {
    for: waitingFor,
    nextAttemptAt: TIMED.has(waitingFor) ? (lead.nextAttemptAt?.toISOString() ?? null) : null,
    linePosition: waitingFor === 'line' ? (positions.get(lead.id) ?? null) : null,
  };
}

/**
 * The place in its campaign's line queue of each of these leads that waits for a line, in one query
 * whatever the number of leads: 1 + the entries of the same campaign not yet granted a line with a
 * smaller seq. Each campaign's waiting entries are ranked once, and only up to the deepest entry asked
 * about (the index LineQueue(campaignId, seq)), so a lead near the head costs little however long the
 * queue. A lead whose entry was granted a line (it is about to dial) or is gone has no place.
 */
export async function linePositions(
  db: AppServices['db'],
  leads: readonly WaitingLead[],
): Promise<Map<string, number>> {
  const ids = leads.filter((lead) => shownWait(lead) === 'line').map((lead) => lead.id);
  if (!ids.length) return new Map();
  const rows = await db.$queryRaw<Array<{ leadId: string; position: number }>>`
    WITH asked AS (
      SELECT "leadId", "campaignId", seq FROM "LineQueue"
       WHERE "leadId" = ANY(${ids}::uuid[]) AND "grantedAt" IS NULL
    ), ranked AS (
      SELECT q.seq, row_number() OVER (PARTITION BY q."campaignId" ORDER BY q.seq) AS position
        FROM "LineQueue" q
        JOIN (SELECT "campaignId", max(seq) AS deepest FROM asked GROUP BY "campaignId") d
          ON d."campaignId" = q."campaignId" AND q.seq <= d.deepest
       WHERE q."grantedAt" IS NULL
    )
    SELECT a."leadId"::text AS "leadId", min(r.position)::int AS position
      FROM asked a JOIN ranked r ON r.seq = a.seq
     GROUP BY a."leadId"`;
  return new Map(rows.map((row) => [row.leadId, row.position]));
}
