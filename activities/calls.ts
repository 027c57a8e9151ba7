import { ApplicationFailure } from '@temporalio/common';
import { callingWindowSchema, DEFAULT_CALLING_WINDOW, nextAllowedInstant, type CallingWindow } from '../lib/calling-window';
import type { CallOutcome } from '../lib/call-outcomes';
import { DEFAULT_DIAL_LADDER, dialLadderSchema, type DialLadder } from '../lib/dial-ladder';
import { ErrorCode } from '../lib/error-codes';
import type { ActivityDependencies } from './index';
import { timeZonesOf } from './phone-time-zones';

export interface LeadPlan {
  ladder: DialLadder;
  window: CallingWindow;
  /** The lead's possible time zones: a call must fall inside the window in every one. */
  timeZones: string[];
}

export interface PlaceCallInput {
  leadId: string;
  /** 1-based rung of the dial ladder. */
  attempt: number;
  /** A journey's call node (and its visit): one lead may then make several ladders of calls. */
  callKey?: string;
}

/**
 * do_not_call: the number is on the workspace's list. campaign_on_hold: the campaign is not running
 * (not started yet, or paused): nothing was dialed, ask again once it changes. campaign_at_capacity:
 * the campaign has its cap of calls in flight: ask again shortly. campaign_stopped: final.
 */
export type PlacedCall =
  | { outcome: CallOutcome; callId: string; durationMs?: number | null }
  | { outcome: 'do_not_call' | 'campaign_on_hold' | 'campaign_stopped' | 'campaign_at_capacity' };

export type LeadFinalStatus = 'completed' | 'failed' | 'cancelled';

function leadNotFound(leadId: string) {
  return ApplicationFailure.create({ type: ErrorCode.lead_not_found, message: `lead ${leadId} not found`, nonRetryable: true });
}

type AttemptVerdict = 'started' | 'do_not_call' | 'campaign_on_hold' | 'campaign_stopped' | 'campaign_at_capacity';

/**
 * Decides, in one transaction, whether an attempt may start, and records it as dialing if so. The
 * campaign row is locked FOR UPDATE: attempts of one campaign are decided one at a time, so the count
 * of calls in flight can be trusted against the cap; and a pause (an UPDATE of that row) waits for an
 * attempt being decided right now and is acknowledged only after, so every later attempt sees it.
 */
async function startAttempt(
  db: ActivityDependencies['db'],
  attempt: { leadId: string; attempt: number; attemptId: string; provider: string; phone: string; workspaceId: string; campaignId: string },
): Promise<AttemptVerdict> {
  return db.$transaction(async (tx) => {
    const [campaign] = await tx.$queryRaw<{ status: string; maxConcurrentCalls: number }[]>`
      SELECT c.status::text AS status, c."maxConcurrentCalls" FROM "Campaign" c JOIN "Lead" l ON l."campaignId" = c.id
      WHERE l.id = ${attempt.leadId}::uuid FOR UPDATE OF c`;
    if (campaign?.status === 'STOPPED') return 'campaign_stopped';
    if (campaign?.status !== 'RUNNING') return 'campaign_on_hold';
    const inFlight = await tx.call.count({ where: { campaignId: attempt.campaignId, status: 'dialing' } });
    if (inFlight >= campaign.maxConcurrentCalls) return 'campaign_at_capacity';
    const blocked = await tx.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: attempt.workspaceId, phone: attempt.phone } } });
    if (blocked) return 'do_not_call';
    await tx.call.upsert({
      where: { attemptId: attempt.attemptId },
      update: {},
      create: {
        workspaceId: attempt.workspaceId, campaignId: attempt.campaignId, leadId: attempt.leadId, attempt: attempt.attempt, attemptId: attempt.attemptId,
        provider: attempt.provider, status: 'dialing', startedAt: new Date(),
      },
    });
    await tx.lead.update({ where: { id: attempt.leadId }, data: { status: 'dialing' } });
    return 'started';
  });
}

export function createCallActivities({ db, calls }: ActivityDependencies) {
  return {
    /** The campaign's ladder and window as they are when the lead starts, and the lead's time zones. */
    async prepareLead({ leadId }: { leadId: string }): Promise<LeadPlan> {
      const lead = await db.lead.findUnique({ where: { id: leadId }, select: { phone: true, campaign: { select: { dialLadder: true, callingWindow: true } } } });
      if (!lead) throw leadNotFound(leadId);
      return {
        ladder: lead.campaign.dialLadder ? dialLadderSchema.parse(lead.campaign.dialLadder) : DEFAULT_DIAL_LADDER,
        window: lead.campaign.callingWindow ? callingWindowSchema.parse(lead.campaign.callingWindow) : DEFAULT_CALLING_WINDOW,
        timeZones: await timeZonesOf(lead.phone),
      };
    },

    /** How long to wait, from now, for the calling window to open in the lead's time zones. */
    async nextCallingSlot({ window, timeZones }: Pick<LeadPlan, 'window' | 'timeZones'>): Promise<{ waitMs: number; at: string } | null> {
      const now = new Date();
      const next = nextAllowedInstant(now, window, timeZones);
      return next && { waitMs: Math.max(next.getTime() - now.getTime(), 0), at: next.toISOString() };
    },

    /**
     * Places one attempt's call, at most once. The Do-Not-Call list is read immediately before.
     * The call is recorded as dialing before the provider is asked; a retry that finds it dialing asks
     * the provider what became of the attempt instead of dialing again.
     */
    async placeCall({ leadId, attempt, callKey }: PlaceCallInput): Promise<PlacedCall> {
      const attemptId = callKey === undefined ? `${leadId}:${attempt}` : `${leadId}:${callKey}:${attempt}`;
      const recorded = await db.call.findUnique({ where: { attemptId } });
      if (recorded?.status === 'ended') return { outcome: recorded.outcome as CallOutcome, callId: recorded.id, durationMs: recorded.durationMs };
      const lead = await db.lead.findUnique({ where: { id: leadId }, select: { phone: true, workspaceId: true, campaignId: true } });
      if (!lead) throw leadNotFound(leadId);

      let result = recorded ? await calls.lookup(attemptId) : null;
      if (!result) {
        const verdict = await startAttempt(db, { leadId, attempt, attemptId, provider: calls.name, ...lead });
        if (verdict !== 'started') return { outcome: verdict };
        result = await calls.dial({ attemptId, to: lead.phone });
      }
      const call = await db.call.update({
        where: { attemptId },
        data: { status: 'ended', providerCallId: result.providerCallId, outcome: result.outcome, durationMs: result.durationMs, endedAt: new Date() },
      });
      return { outcome: result.outcome, callId: call.id, durationMs: call.durationMs };
    },

    async finishLead({ leadId, status }: { leadId: string; status: LeadFinalStatus }): Promise<void> {
      await db.lead.update({ where: { id: leadId }, data: { status } });
    },

    async campaignStatusOfLead({ leadId }: { leadId: string }): Promise<string> {
      const lead = await db.lead.findUnique({ where: { id: leadId }, select: { campaign: { select: { status: true } } } });
      if (!lead) throw leadNotFound(leadId);
      return lead.campaign.status;
    },
  };
}
