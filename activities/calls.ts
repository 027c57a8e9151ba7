import { ApplicationFailure } from '@temporalio/common';
import {
  callingWindowSchema,
  DEFAULT_CALLING_WINDOW,
  nextAllowedInstant,
  type CallingWindow,
} from '../lib/calling-window';
import type { CallOutcome } from '../lib/call-outcomes';
import { DEFAULT_DIAL_LADDER, dialLadderSchema, type DialLadder } from '../lib/dial-ladder';
import { ErrorCode } from '../lib/error-codes';
import type { ActivityDependencies } from './index';
import { timeZonesOf } from './phone-time-zones';
import { endCall, resumeOrWithdraw, takeLine } from './call-lines';

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
  return ApplicationFailure.create({
    type: ErrorCode.lead_not_found,
    message: `lead ${leadId} not found`,
    nonRetryable: true,
  });
}

export function createCallActivities({ db, calls }: ActivityDependencies) {
  return {
    /** The campaign's ladder and window as they are when the lead starts, and the lead's time zones. */
    async prepareLead({ leadId }: { leadId: string }): Promise<LeadPlan> {
      const lead = await db.lead.findUnique({
        where: { id: leadId },
        select: { phone: true, campaign: { select: { dialLadder: true, callingWindow: true } } },
      });
      if (!lead) throw leadNotFound(leadId);
      return {
        ladder: lead.campaign.dialLadder ? dialLadderSchema.parse(lead.campaign.dialLadder) : DEFAULT_DIAL_LADDER,
        window: lead.campaign.callingWindow
          ? callingWindowSchema.parse(lead.campaign.callingWindow)
          : DEFAULT_CALLING_WINDOW,
        timeZones: await timeZonesOf(lead.phone),
      };
    },

    /** How long to wait, from now, for the calling window to open in the lead's time zones. */
    async nextCallingSlot({
      window,
      timeZones,
    }: Pick<LeadPlan, 'window' | 'timeZones'>): Promise<{ waitMs: number; at: string } | null> {
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
      if (recorded?.status === 'ended')
        return { outcome: recorded.outcome as CallOutcome, callId: recorded.id, durationMs: recorded.durationMs };

      let result = recorded ? await calls.lookup(attemptId) : null;
      if (!result) {
        const decision = recorded
          ? await resumeOrWithdraw(db, { leadId, attemptId })
          : await takeLine(db, { leadId, attempt, attemptId, provider: calls.name });
        if (!decision) throw leadNotFound(leadId);
        if (decision.verdict !== 'started') return { outcome: decision.verdict };
        result = await calls.dial({ attemptId, to: decision.phone });
      }
      const call = await endCall(db, attemptId, result);
      return { outcome: result.outcome, callId: call.id, durationMs: call.durationMs };
    },

    async finishLead({ leadId, status }: { leadId: string; status: LeadFinalStatus }): Promise<void> {
      await db.lead.update({ where: { id: leadId }, data: { status } });
    },

    async campaignStatusOfLead({ leadId }: { leadId: string }): Promise<string> {
      const lead = await db.lead.findUnique({
        where: { id: leadId },
        select: { campaign: { select: { status: true } } },
      });
      if (!lead) throw leadNotFound(leadId);
      return lead.campaign.status;
    },
  };
}
