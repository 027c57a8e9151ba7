import { patched, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { isPickedUp, type CallOutcome } from '../../lib/calls/call-outcomes';
import { afterAttempt } from '../../lib/dial-ladder/ladder-rules';
import type { AttemptStep, LeadPlan } from '../../activities/dial-ladder/calls';
import { awaitCallEnd, receiveEndedCalls } from '../calls/call-on-carrier';
import { leadStateQuery, lineGrantedSignal, numberOptedOutSignal } from '../../lib/temporal/messages';
import { PATCHES } from '../../lib/temporal/patches';
import { receiveCampaignChanges } from '../campaigns/campaign-hold';
import { leadDialSteps } from '../../lib/temporal/retry-policies';
import type { LeadDialInput, LeadDialResult, LeadState } from '../../lib/dial-ladder/lead-state';

// Reconciliation asks the carrier, which may be slow: an activity of its own, retried by Temporal.
const { reconcileCall } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: leadDialSteps,
});

/**
 * The two steps of every attempt, each one local activity (one marker) inside the workflow task: attemptCall
 * (plan, calling window, line or queue, dial) and settleLead (aftermath, finish or next rung). Both are idempotent,
 * as a workflow task that fails runs its local activities again.
 */
const { attemptCall, settleLead, campaignStatusOfLead } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: leadDialSteps,
});

/**
 * A lead in its campaign's line queue is woken by lineGranted when a line is handed to it, and by campaignChanged
 * when its campaign is stopped. Should both be lost (the sweep sends a grant's wake-up again while the line stays
 * unused), it looks again by itself this rarely: the wait costs nothing that grows with its length.
 */
const QUEUED_RECHECK_MS = 60 * 60_000;

/**
 * The lean ladder with one local activity per call where the call's end leaves it nothing to do: it asks that the
 * call's end settle the lead (attemptCall's settleAtEnd: on the outcomes that end the ladder and have no aftermath,
 * the statement that ends the call finishes the lead, lib/calls/call-end.ts), and when the end says it did
 * (EndedCall.leadSettled), it ends without settleLead. Everything else as leadLadderWorkflow
 * (workflows/dial-ladder/legacy/lead-ladder.ts), which it succeeds for new leads and for a journey's call node (whose
 * calls never settle their lead: its commands are the lean ladder's): a new workflow type, not a patch, so that its
 * runs record no marker and no search attribute.
 */
export async function leadLadderWorkflowV2(input: LeadDialInput): Promise<LeadDialResult> {
  return runLeadLadder(input, true);
}

/**
 * Both lean ladders: leadLadderWorkflowV2 (settleAtEnd) and the legacy leadLadderWorkflow, whose commands differ only
 * by the settleLead the former leaves out. Both types' committed histories replay this code.
 */
export async function runLeadLadder(
  { leadId, callKey, agentId }: LeadDialInput,
  settleAtEnd: boolean,
): Promise<LeadDialResult> {
  const state: LeadState = { phase: 'preparing', attempt: 0, lastOutcome: null, nextWakeAt: null };
  let lastCall: LeadDialResult['lastCall'];
  let lineGranted = false;
  setHandler(leadStateQuery, () => state);
  const campaign = receiveCampaignChanges(state, () => campaignStatusOfLead({ leadId }));
  setHandler(lineGrantedSignal, () => {
    lineGranted = true;
  });
  const endedCalls = receiveEndedCalls();
  /**
   * The lead's number was put on the Do-Not-Call list (docs/features/dial-ladder.md#an-opt-out-ends-the-wait): a wait
   * for its next rung or its calling window ends the lead at once (do_not_call, its result opted_out) instead of when
   * it comes due. The patch is asked only when told, so a run never told records no marker; a run whose signal a worker
   * without the handler took replays without it.
   */
  let optedOut = false;
  /** A hold in the line queue that optedOut woke went on to the attempt, which reads the list itself. */
  let optOutHeardInQueue = false;
  setHandler(numberOptedOutSignal, () => {
    if (patched(PATCHES.optOutEndsWait.id)) optedOut = true;
  });

  const result = (status: LeadDialResult['status']): LeadDialResult => {
    Object.assign(state, { phase: 'finished', nextWakeAt: null });
    return {
      status,
      outcome: state.lastOutcome,
      attempts: state.attempt,
      ...(callKey !== undefined && lastCall && { lastCall }),
    };
  };
  const finished = (status: LeadDialResult['status']) => ({
    status,
    outcome: state.lastOutcome,
    attempts: state.attempt,
  });
  /** Ends the lead without a call on this attempt. */
  const end = async (outcome: LeadDialResult['outcome'], status: LeadDialResult['status']) => {
    state.lastOutcome = outcome;
    await settleLead({ leadId, ...(callKey !== undefined && { callKey }), finished: finished(status) });
    return result(status);
  };

  let plan: LeadPlan | undefined;
  /** The delay of the rung about to be attempted (after the first). */
  let rungDelayMs = 0;
  for (let attempt = 1; ; attempt++) {
    state.attempt = attempt;
    if (rungDelayMs > 0 && !(await campaign.waitUnlessStopped('waiting_for_rung', rungDelayMs, () => optedOut)))
      return end('campaign_stopped', 'cancelled');
    if (optedOut) return end('do_not_call', 'cancelled');
    const input = {
      leadId,
      attempt,
      ...(callKey !== undefined && { callKey }),
      ...(agentId !== undefined && { agentId }),
      ...(settleAtEnd && { settleAtEnd }),
    };
    let step: AttemptStep;
    for (;;) {
      state.phase = 'dialing';
      lineGranted = false;
      campaign.forgetChanges();
      const answer = await attemptCall({ ...input, ...(plan && { plan }) });
      plan ??= answer.plan;
      step = answer.step;
      if (step.outcome === 'window_closed') {
        if (!(await campaign.waitUnlessStopped('waiting_for_window', step.waitMs, () => optedOut)))
          return end('campaign_stopped', 'cancelled');
        if (optedOut) return end('do_not_call', 'cancelled');
        continue;
      }
      if (step.outcome === 'queued' || step.outcome === 'campaign_on_hold') {
        // A signal that came while attemptCall ran counts: it was forgotten before. An opt-out wakes the hold once:
        // the attempt then reads the list, ends do_not_call and leaves the line queue (attemptCall).
        await campaign.hold(
          step.outcome === 'queued' ? 'waiting_for_line' : 'waiting_for_campaign',
          QUEUED_RECHECK_MS,
          () => lineGranted || (optedOut && !optOutHeardInQueue),
        );
        optOutHeardInQueue = optedOut;
        continue;
      }
      break;
    }
    if (step.outcome === 'no_calling_window') return end('no_calling_window', 'failed');
    if (step.outcome === 'campaign_stopped') return end('campaign_stopped', 'cancelled');
    if (step.outcome === 'do_not_call') return end('do_not_call', 'cancelled');
    let call: { outcome: CallOutcome; callId: string; durationMs: number | null; callbackAt?: string | null };
    /** The call's end settled the lead (only ever asked by leadLadderWorkflowV2). */
    let leadSettled = false;
    if (step.outcome === 'dialed') {
      state.phase = 'on_call';
      const ended = await awaitCallEnd(step, endedCalls, reconcileCall);
      call = {
        outcome: ended.outcome,
        callId: ended.callId,
        durationMs: ended.durationMs,
        callbackAt: ended.callbackAt,
      };
      leadSettled = settleAtEnd && ended.leadSettled === true;
    } else if ('callId' in step)
      call = { outcome: step.outcome, callId: step.callId, durationMs: step.durationMs ?? null };
    // The older ladder's answers (on hold, at capacity), which attemptCall never gives: attempt again.
    else continue;
    state.lastOutcome = call.outcome;
    lastCall = { callId: call.callId, durationMs: call.durationMs };
    // A callback the lead asked for is the next attempt, at its time (afterAttempt): outcomes calls recorded before the
    // conversation tools never gave, so their histories replay as before.
    const after = afterAttempt(plan!.ladder, attempt, call.outcome, call.callbackAt, Date.now());
    const over = after.over;
    const status = isPickedUp(call.outcome) ? 'completed' : 'failed';
    rungDelayMs = after.delayMs;
    // Settled by the call's end only on outcomes that end the ladder (outcomesSettledAtEnd), as this run decides too.
    if (leadSettled && over) return result(status);
    await settleLead({
      leadId,
      ...(callKey !== undefined && { callKey }),
      ended: { callId: call.callId, outcome: call.outcome },
      ...(over
        ? { finished: finished(status) }
        : rungDelayMs > 0 && { nextAttemptAt: new Date(Date.now() + rungDelayMs).toISOString() }),
    });
    if (over) return result(status);
  }
}
