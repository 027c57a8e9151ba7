/*
 * LEGACY: leadDialWorkflow, the first CLASSIC ladder. No new run starts it: a new CLASSIC lead and a journey's call
 * node run leadLadderWorkflowV2 (workflows/dial-ladder/lead-ladder.ts).
 * What still needs it: runs started before the lean ladder (9d6d50d, 2026-11-27) that are still open (a lead held
 * by a paused campaign may stay open for months), journey runs that started it as their call node's child before
 * the call-node-lean-ladder patch (they replay that child), its 18 committed lead-dial-* histories (test/histories/)
 * and its six patches (lib/temporal/patches.ts: result-webhooks ... dial-in-workflow-task).
 * When it may go (docs/patch-register.md#replaced-workflow-types): once
 *   temporal workflow count --query "WorkflowType='leadDialWorkflow' AND ExecutionStatus='Running'"
 * answers 0, it leaves workflows/index.ts with its patches and histories; journeyRunWorkflow names it until the
 * call-node-lean-ladder patch retires (its retireWhen in lib/temporal/patches.ts).
 * Change nothing here that changes a command it gives: its commands are in committed histories that must keep
 * replaying (its hold moved to workflows/campaigns/campaign-hold.ts with the same commands).
 */
import { patched, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../../activities';
import { isPickedUp, isToolOutcome, type CallOutcome } from '../../../lib/calls/call-outcomes';
import { withEveryOutcomeRule } from '../../../lib/dial-ladder/ladder-rules';
import { hasAftermath } from '../../../lib/calls/call-aftermath';
import type { PlaceCallInput, PlacedCall } from '../../../activities/dial-ladder/calls';
import { awaitCallEnd, receiveEndedCalls } from '../../calls/call-on-carrier';
import { leadStateQuery } from '../../../lib/temporal/messages';
import { receiveCampaignChanges } from '../../campaigns/campaign-hold';
import { leadDialSteps } from '../../../lib/temporal/retry-policies';
import { PATCHES } from '../../../lib/temporal/patches';
import type { LeadDialInput, LeadDialResult, LeadState } from '../../../lib/dial-ladder/lead-state';

// The call: a short activity. Should the worker running one die, the missing heartbeat lets Temporal
// retry it on another worker after 10 s instead of waiting out the whole start-to-close timeout.
const remote = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: leadDialSteps,
});

/**
 * The lead's bookkeeping (its plan, the next calling slot, the campaign's status, the final status and
 * the result webhook events) runs as local activities: in the worker, within the workflow task, recorded
 * as markers. A one-call lead then costs Temporal two workflow tasks and one activity task instead of six
 * and five, which is what bounds how fast a large campaign drains. Each of them is idempotent, as a
 * workflow task that fails runs its local activities again.
 */
const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: leadDialSteps });

/** A lead held by its campaign looks again by itself this often, should a signal have been missed. */
const CAMPAIGN_RECHECK_MS = 5 * 60_000;
/** A lead waiting for a free line of its campaign looks again after 1 s, doubling up to 30 s. */
const CAPACITY_RETRY_FIRST_MS = 1_000;
const CAPACITY_RETRY_MAX_MS = 30_000;

/**
 * One lead on the CLASSIC dial ladder: each rung waits its delay, then for the calling window in the
 * lead's local time (durable timers), then places one call; the outcome's rule ends the ladder or
 * moves on. The ladder and window are the campaign's when the lead starts. While the campaign is not
 * running the lead holds before its next attempt and continues where it stood; a stopped campaign
 * ends it cancelled, even in the middle of a wait.
 */
export async function leadDialWorkflow({ leadId, callKey, agentId }: LeadDialInput): Promise<LeadDialResult> {
  // Runs started before bookkeeping moved into the workflow task replay with the activities they recorded.
  const { prepareLead, nextCallingSlot, finishLead, campaignStatusOfLead, enqueueLeadFinished } = patched(
    PATCHES.localBookkeeping.id,
  )
    ? local
    : remote;
  const { placeCall, reconcileCall } = remote;
  const state: LeadState = { phase: 'preparing', attempt: 0, lastOutcome: null, nextWakeAt: null };
  let lastCall: LeadDialResult['lastCall'];
  setHandler(leadStateQuery, () => state);
  const campaign = receiveCampaignChanges(state, () => campaignStatusOfLead({ leadId }));
  const endedCalls = receiveEndedCalls();

  /**
   * The asynchronous carrier path: the call is placed (dialCall answers at once), then its end is
   * waited for as durable state. Past the deadline the carrier is asked (reconcileCall), again every
   * recheck while it says the call is still on, and at the last recheck the call is given up.
   */
  const callThroughCarrier = async (input: PlaceCallInput): Promise<PlacedCall> => {
    // Since 'dial-in-workflow-task' the dial (a short, idempotent request) runs as a local activity: one
    // marker instead of an activity task and the workflow task its completion took. Asked per attempt,
    // as 'async-carrier' is: a run recorded before keeps its remote dials while replaying them.
    const placed = patched(PATCHES.dialInWorkflowTask.id) ? await local.dialCall(input) : await remote.dialCall(input);
    if (placed.outcome !== 'dialed') return placed;
    state.phase = 'on_call';
    const ended = await awaitCallEnd(placed, endedCalls, reconcileCall);
    return { outcome: ended.outcome, callId: ended.callId, durationMs: ended.durationMs };
  };

  const finish = async (status: LeadDialResult['status']): Promise<LeadDialResult> => {
    if (callKey === undefined) {
      await finishLead({ leadId, status });
      // Result webhooks: versioned, so that leads already in flight replay the history they recorded.
      if (patched(PATCHES.resultWebhooks.id))
        await enqueueLeadFinished({ leadId, outcome: state.lastOutcome, attempts: state.attempt });
    }
    Object.assign(state, { phase: 'finished', nextWakeAt: null });
    return {
      status,
      outcome: state.lastOutcome,
      attempts: state.attempt,
      ...(callKey !== undefined && lastCall && { lastCall }),
    };
  };
  const stopped = () => {
    state.lastOutcome = 'campaign_stopped';
    return finish('cancelled');
  };

  const plan = await prepareLead({ leadId });
  let capacityRetryMs = CAPACITY_RETRY_FIRST_MS;
  for (const [index, rung] of plan.ladder.rungs.entries()) {
    state.attempt = index + 1;
    if (
      index > 0 &&
      rung.delaySeconds > 0 &&
      !(await campaign.waitUnlessStopped('waiting_for_rung', rung.delaySeconds * 1000))
    )
      return stopped();
    for (;;) {
      const slot = await nextCallingSlot(plan);
      if (slot === null) {
        // The window never opens in every one of the lead's zones at once: it cannot be called.
        state.lastOutcome = 'no_calling_window';
        return finish('failed');
      }
      if (slot.waitMs > 0) {
        if (!(await campaign.waitUnlessStopped('waiting_for_window', slot.waitMs))) return stopped();
        continue;
      }
      state.phase = 'dialing';
      const attemptInput = {
        leadId,
        attempt: state.attempt,
        ...(callKey !== undefined && { callKey }),
        ...(agentId !== undefined && { agentId }),
      };
      // Asked at every attempt: a run recorded on the synchronous path continues on it while replaying,
      // and its later attempts take the carrier path.
      const call = patched(PATCHES.asyncCarrier.id)
        ? await callThroughCarrier(attemptInput)
        : await placeCall(attemptInput);
      if (call.outcome === 'campaign_stopped') return stopped();
      if (call.outcome === 'campaign_at_capacity') {
        if (!(await campaign.waitUnlessStopped('waiting_for_line', capacityRetryMs))) return stopped();
        capacityRetryMs = Math.min(capacityRetryMs * 2, CAPACITY_RETRY_MAX_MS);
        continue;
      }
      capacityRetryMs = CAPACITY_RETRY_FIRST_MS;
      if (call.outcome === 'campaign_on_hold') {
        // Not started yet, or paused: hold here, then look at the window again.
        campaign.forgetChanges();
        await campaign.hold('waiting_for_campaign', CAMPAIGN_RECHECK_MS);
        continue;
      }
      state.lastOutcome = call.outcome;
      if ('callId' in call) {
        lastCall = { callId: call.callId, durationMs: call.durationMs ?? null };
        // However the call ended (its event, or reconciliation): its intelligence, its campaign's breaker.
        // Since 'aftermath-when-needed' only a call that has an aftermath asks for it, in the workflow task;
        // runs recorded before ran it for every call, as an activity task.
        if (patched(PATCHES.afterCallEnded.id)) {
          if (!patched(PATCHES.aftermathWhenNeeded.id)) await remote.afterCallEnded({ callId: call.callId });
          else if (hasAftermath(call.outcome)) await local.afterCallEnded({ callId: call.callId });
        }
      }
      if (call.outcome === 'do_not_call') return finish('cancelled');
      break;
    }
    const outcome = state.lastOutcome as CallOutcome;
    // The tools' outcomes, which plans recorded before them do not rule, follow their defaults; every other outcome
    // reads the recorded plan as it always did.
    const rules = isToolOutcome(outcome) ? withEveryOutcomeRule(plan.ladder).outcomes : plan.ladder.outcomes;
    if (rules[outcome] === 'end') break;
  }
  return finish(isPickedUp(state.lastOutcome) ? 'completed' : 'failed');
}
