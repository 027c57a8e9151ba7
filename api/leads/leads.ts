import { leadWorkflowKind } from '../../lib/campaigns/lead-workflow-kind';
import type { Campaign } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { isDatabaseUnavailable } from '../http/database-errors';
import { Refusal } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import type { AppServices } from '../app-services';
import { storeJourneyLeads } from './journey-intake';
import { upsertLeads } from './lead-store';
import type { Admission, LeadToAdmit, StoredLeads } from './admission';
import { log } from '../../lib/log';
import { handOutFreeLines, type GrantedLine } from '../../lib/calls/call-lines';
import { handOverLines } from '../../lib/temporal/line-queue';
import { poolSql } from '../../lib/run-sql';

export type { Admission, LeadInput, LeadToAdmit, StoredLeads } from './admission';

/** The campaign a push goes to, or the refusal of the whole push. */
export async function campaignAcceptingLeads(
  services: AppServices,
  principal: Principal,
  campaignId: string,
): Promise<Campaign> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  if (campaign.channel === 'EMAIL') throw new Refusal(ErrorCode.api_key_not_allowed);
  if (!campaign.acceptsLeadPush || campaign.status === 'STOPPED')
    throw new Refusal(ErrorCode.campaign_not_accepting_leads);
  return campaign;
}

/**
 * Accepts each lead exactly once per (campaign, idempotency key), by construction: the unique
 * constraint on (campaignId, idempotencyKey) lets exactly one request insert the row, and that request
 * reports the lead queued; every other request for the key finds the row and reports a duplicate. The
 * answer waits only for the row's commit, which makes the lead durable; its workflow (whose id derives
 * from the same pair, so Temporal refuses a second one) is started from the row afterwards by the lead
 * dispatcher. A batch that could not be stored is rejected as retryable, lead by lead.
 */
export async function admitLeads(
  services: AppServices,
  principal: Principal,
  campaign: Campaign,
  leads: readonly LeadToAdmit[],
  requestId: string,
): Promise<Admission[]> {
  let stored: StoredLeads;
  try {
    stored =
      campaign.kind === 'JOURNEY'
        ? await storeJourneyLeads(services, principal, campaign, uniqueByKey(leads), requestId)
        : {
            rows: await upsertLeads(services.sql, principal, campaign, uniqueByKey(leads), requestId),
            refused: new Map(),
          };
  } catch (error) {
    if (error instanceof Refusal) throw error;
    log.error({ err: error, requestId }, 'leads of the request not stored');
    const code = isDatabaseUnavailable(error) ? ErrorCode.database_unavailable : ErrorCode.internal_error;
    return leads.map(() => ({
      outcome: 'rejected',
      leadId: null,
      retryable: true,
      error: code,
      reason: 'lead_not_stored',
    }));
  }
  const { rows, refused } = stored;
  const rowByKey = new Map(rows.map((row) => [row.idempotencyKey, row]));
  const kind = leadWorkflowKind(campaign);
  const handedHere = kind === 'CLASSIC' ? await handOutLinesOnPush(services, campaign, rows) : new Set<string>();
  services.leadDispatcher.dispatchSoon(
    rows
      // A CLASSIC lead left in its line queue has no workflow until a line is handed to it: the hand-over starts it.
      .filter((row) => !row.workflowStartedAt && (kind !== 'CLASSIC' || handedHere.has(row.id)))
      .map((row) => ({ ...row, campaignId: campaign.id, workspaceId: principal.workspaceId, kind })),
  );
  const answered = new Set<string>();
  return leads.map(({ idempotencyKey, lead }): Admission => {
    const refusal = refused.get(idempotencyKey);
    if (refusal) return refusal;
    const row = rowByKey.get(idempotencyKey)!;
    // The same key twice in one batch: the second is a duplicate of the first.
    const first = row.inserted && !answered.has(idempotencyKey);
    answered.add(idempotencyKey);
    return {
      outcome: first ? 'queued' : 'duplicate',
      leadId: row.id,
      undeclaredVariables: stored.undeclaredVariables?.(lead) ?? [],
    };
  });
}

/**
 * A running CLASSIC campaign's free lines are handed to the first of its line queue right after a push stored its
 * leads there (lib/calls/call-lines.ts). Answers the leads of this push that got one (their workflows start at once,
 * with no need of a wake-up); the queue's older entries that got one are woken off the request's path (a wake-up
 * lost here is sent again by the dispatcher's sweep). A campaign not running hands out nothing: its start does.
 */
async function handOutLinesOnPush(
  services: AppServices,
  campaign: Campaign,
  rows: readonly { id: string; inserted: boolean }[],
): Promise<Set<string>> {
  if (campaign.status !== 'RUNNING') return new Set();
  const sql = poolSql(services.sql);
  let granted: GrantedLine[];
  try {
    granted = await handOutFreeLines(sql, campaign.id);
  } catch (error) {
    // The leads are stored and queued: the next line given back, or the sweep, hands them theirs.
    log.warn({ err: error, campaignId: campaign.id }, 'free lines not handed out after a push');
    return new Set();
  }
  const pushed = new Set(rows.filter((row) => row.inserted).map((row) => row.id));
  const here = new Set(granted.filter((line) => pushed.has(line.leadId)).map((line) => line.leadId));
  const older = granted.filter((line) => !here.has(line.leadId));
  if (older.length)
    void handOverLines(sql, services.temporal, older, services.taskQueue).catch((error: unknown) =>
      log.warn({ err: error, campaignId: campaign.id }, 'queued leads not woken after a push'),
    );
  return here;
}

/** One lead per key: a key repeated within a batch is answered as a duplicate of its first lead. */
function uniqueByKey(leads: readonly LeadToAdmit[]): LeadToAdmit[] {
  const firstByKey = new Map<string, LeadToAdmit>();
  for (const lead of leads) if (!firstByKey.has(lead.idempotencyKey)) firstByKey.set(lead.idempotencyKey, lead);
  return [...firstByKey.values()];
}
