import type { AppServices } from '../app-services';
import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import { linePositionsOfLeads } from './lead-store';

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
 * The place in its campaign's line queue of each of these leads that waits for a line (linePositionsOfLeads), in one
 * query whatever the number of leads.
 */
export async function linePositions(
  db: AppServices['db'],
  leads: readonly WaitingLead[],
): Promise<Map<string, number>> {
  const ids = leads.filter((lead) => shownWait(lead) === 'line').map((lead) => lead.id);
  if (!ids.length) return new Map();
  return linePositionsOfLeads(db, ids);
}
