import { Context } from '@temporalio/activity';
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
import { applyCallEvent, endLostCall } from './call-end';
import { isTerminalCallState } from '../lib/telephony/call-states';
import type { EndedCall } from '../lib/telephony/ended-call';
import { resumeOrWithdraw, takeLine } from './call-lines';
import { hangUpCalls } from './call-hangup';
import { DEFAULT_CALL_END_DEADLINE_MS, RECHECK_AFTER_DEADLINE_MS, RECHECKS_AFTER_DEADLINE } from './call-deadline';
import type { CarrierAgent, CarrierDialRequest } from './providers/carrier';

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

/**
 * dialed: the carrier took the call; its end comes as callEndedSignal, or by reconcileCall once
 * deadlineMs has passed (then every recheckMs, rechecks times). An attempt whose call had already
 * ended answers its outcome; one that was not placed answers why, as PlacedCall does.
 */
export type DialedCall =
  | { outcome: 'dialed'; callId: string; attemptId: string; deadlineMs: number; recheckMs: number; rechecks: number }
  | PlacedCall;

/** The carrier's idempotency key of one attempt. */
export function attemptIdOf({ leadId, attempt, callKey }: PlaceCallInput): string {
  return callKey === undefined ? `${leadId}:${attempt}` : `${leadId}:${callKey}:${attempt}`;
}

function callNotFound(attemptId: string) {
  return ApplicationFailure.create({
    type: ErrorCode.call_not_found,
    message: `no call recorded for attempt ${attemptId}`,
    nonRetryable: true,
  });
}

/** The workflow this activity runs for (null when called outside an activity, as some tests do). */
function runningWorkflowId(): string | null {
  try {
    return Context.current().info.workflowExecution?.workflowId ?? null;
  } catch {
    return null;
  }
}

function heartbeatIfInActivity(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // Not in an activity: nothing to report to.
  }
}

export type LeadFinalStatus = 'completed' | 'failed' | 'cancelled';

/** Who the agent talks to: the call's lead, or the lead a test call was placed for. */
function leadOfCall(call: {
  lead: { name: string | null; fields: unknown } | null;
  testLead: unknown;
}): CarrierDialRequest['lead'] {
  const lead = call.lead ?? (call.testLead as { name?: string | null; fields?: unknown } | null);
  return { name: lead?.name ?? null, fields: (lead?.fields ?? {}) as Record<string, unknown> };
}

function leadNotFound(leadId: string) {
  return ApplicationFailure.create({
    type: ErrorCode.lead_not_found,
    message: `lead ${leadId} not found`,
    nonRetryable: true,
  });
}

export function createCallActivities({
  db,
  calls,
  statusCallbackBaseUrl,
  callEndDeadlineMs = DEFAULT_CALL_END_DEADLINE_MS,
}: ActivityDependencies) {
  const dialed = (callId: string, attemptId: string): DialedCall => ({
    outcome: 'dialed',
    callId,
    attemptId,
    deadlineMs: callEndDeadlineMs,
    recheckMs: Math.min(RECHECK_AFTER_DEADLINE_MS, callEndDeadlineMs),
    rechecks: RECHECKS_AFTER_DEADLINE,
  });
  const recordProviderCallId = async (attemptId: string, providerCallId: string) => {
    await db.call.updateMany({ where: { attemptId, providerCallId: null }, data: { providerCallId } });
    return db.call.findUniqueOrThrow({ where: { attemptId }, select: { id: true, campaignId: true } });
  };
  const campaignStatusOfCall = async (campaignId: string) =>
    (await db.campaign.findUniqueOrThrow({ where: { id: campaignId }, select: { status: true } })).status;
  const hangUp = (inProgress: Array<{ attemptId: string; providerCallId: string }>) =>
    hangUpCalls(db, calls, inProgress);
  /** What the carrier is told: the numbers, the agent and the lead for the conversation, where to report. */
  const dialRequest = async (attemptId: string, to: string): Promise<CarrierDialRequest> => {
    const call = await db.call.findUniqueOrThrow({
      where: { attemptId },
      select: { fromNumber: true, agentId: true, testLead: true, lead: { select: { name: true, fields: true } } },
    });
    const agent = call.agentId ? await db.agent.findUnique({ where: { id: call.agentId } }) : null;
    return {
      attemptId,
      from: call.fromNumber,
      to,
      agent: agent && {
        id: agent.id,
        language: agent.language,
        voiceId: agent.voiceId,
        script: agent.script as unknown as CarrierAgent['script'],
        extractionFields: agent.extractionFields as unknown as CarrierAgent['extractionFields'],
      },
      lead: leadOfCall(call),
      statusCallbackUrl: `${statusCallbackBaseUrl}/telephony/${encodeURIComponent(calls.name)}/events`,
    };
  };
  const activities = {
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
     * Places one attempt's call through the carrier, at most once, and answers its call id at once: the
     * call's end arrives later as the carrier's terminal event (callEndedSignal). The Do-Not-Call list is
     * read immediately before. The call is recorded as dialing, with a line taken and the waiting
     * workflow's id, before the carrier is asked; a retry that finds it recorded asks the carrier what
     * became of the attempt instead of dialing again.
     */
    async dialCall({ leadId, attempt, callKey }: PlaceCallInput): Promise<DialedCall> {
      const attemptId = attemptIdOf({ leadId, attempt, callKey });
      const recorded = await db.call.findUnique({ where: { attemptId } });
      if (recorded?.status === 'ended')
        return { outcome: recorded.outcome as CallOutcome, callId: recorded.id, durationMs: recorded.durationMs };
      if (recorded?.providerCallId) return dialed(recorded.id, attemptId);
      const known = recorded ? await calls.lookup({ attemptId }) : null;
      if (recorded && known) {
        await recordProviderCallId(attemptId, known.providerCallId);
        return dialed(recorded.id, attemptId);
      }
      const decision = recorded
        ? await resumeOrWithdraw(db, { leadId, attemptId })
        : await takeLine(db, { leadId, attempt, attemptId, provider: calls.name, workflowId: runningWorkflowId() });
      if (!decision) throw leadNotFound(leadId);
      if (decision.verdict !== 'started') return { outcome: decision.verdict };
      const { providerCallId } = await calls.dial(await dialRequest(attemptId, decision.phone));
      const call = await recordProviderCallId(attemptId, providerCallId);
      // The campaign was stopped while the carrier was being asked: its stop found no carrier id to hang up.
      if (call.campaignId !== null && (await campaignStatusOfCall(call.campaignId)) === 'STOPPED')
        await hangUp([{ attemptId, providerCallId }]);
      return dialed(call.id, attemptId);
    },

    /**
     * Past the deadline without a terminal event: what the carrier knows now. An ended call is ended
     * through the same code as the event endpoint; one still on is left to wait (unless giveUp); one the
     * carrier does not know, or still on when giving up (hung up then), ends failed: lost.
     */
    async reconcileCall({
      attemptId,
      giveUp,
    }: {
      attemptId: string;
      giveUp: boolean;
    }): Promise<{ ended: EndedCall | null }> {
      const call = await db.call.findUnique({ where: { attemptId } });
      if (!call) throw callNotFound(attemptId);
      if (call.status === 'ended')
        return {
          ended: { attemptId, callId: call.id, outcome: call.outcome as CallOutcome, durationMs: call.durationMs },
        };
      const known = await calls.lookup(call.providerCallId ? { providerCallId: call.providerCallId } : { attemptId });
      if (known && isTerminalCallState(known.status)) {
        const result = await applyCallEvent(db, calls.name, {
          eventId: `lookup:${known.providerCallId}:${known.status}`,
          providerCallId: known.providerCallId,
          attemptId,
          status: known.status,
          answeredBy: known.answeredBy,
          durationMs: known.durationMs,
          reason: known.reason ?? null,
          occurredAt: new Date().toISOString(),
        });
        if (result.found && result.ended) return { ended: result.ended };
      }
      if (known && !giveUp) return { ended: null };
      if (known) await hangUp([{ attemptId, providerCallId: known.providerCallId }]);
      return { ended: await endLostCall(db, attemptId) };
    },

    /**
     * The synchronous placeCall of runs recorded before the asynchronous carrier path (patched
     * 'async-carrier'): it dials as dialCall does, then waits, heartbeating, until the call has ended.
     */
    async placeCall(input: PlaceCallInput): Promise<PlacedCall> {
      const placed = await activities.dialCall(input);
      if (placed.outcome !== 'dialed') return placed;
      for (;;) {
        heartbeatIfInActivity();
        const call = await db.call.findUniqueOrThrow({ where: { id: placed.callId } });
        if (call.status === 'ended')
          return { outcome: call.outcome as CallOutcome, callId: call.id, durationMs: call.durationMs };
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
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
  return activities;
}
