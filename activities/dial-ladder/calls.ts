import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { callingWindowSchema, DEFAULT_CALLING_WINDOW, type CallingWindow } from '../../lib/dial-ladder/calling-window';
import type { CallOutcome } from '../../lib/calls/call-outcomes';
import {
  DEFAULT_DIAL_LADDER,
  dialLadderSchema,
  outcomesSettledAtEnd,
  type DialLadder,
} from '../../lib/dial-ladder/dial-ladder';
import { ErrorCode } from '../../lib/error-codes';
import type { ActivityDependencies } from '../dependencies';
import { withEveryOutcomeRule } from '../../lib/dial-ladder/ladder-rules';
import { timeZonesOf } from '../../lib/dial-ladder/phone-time-zones';
import { markLeadWaitingForRung, readLeadPlan } from '../../lib/dial-ladder/dial-ladder-store';
import { applyCallEvent, endLostCall } from '../../lib/calls/call-end';
import { isTerminalCallState } from '../../lib/calls/call-states';
import type { EndedCall } from '../../lib/calls/ended-call';
import { endCall, leaveLineQueue, resumeOrWithdraw, takeLine, type GrantedLine } from '../../lib/calls/call-lines';
import { hasAftermath } from '../../lib/calls/call-aftermath';
import { handOverLines } from '../../lib/temporal/line-queue';
import { afterCallEnded } from '../calls/call-aftermath';
// enqueueLeadFinished is still a method of the result webhooks' factory, built where it is used: it keeps no state
// across calls that this needs.
import { enqueueLeadFinished } from '../result-webhooks/result-webhooks';
import { hangUpCalls } from '../calls/call-hangup';
import {
  dialed,
  dialRequest,
  dialRequestOf,
  recordProviderCallId,
  type DialedCall,
  type PlacedCall,
} from '../calls/carrier-dialing';
import { considerCarrierBreaker, pauseForRefusedSetup, recordDialRefusal } from './carrier-breaker';
import { CarrierRefusedNumberError, CarrierRefusedSetupError, type CarrierDialRequest } from '../../lib/calls/carrier';
import type { LeadFinishedInput } from '../result-webhooks/result-webhooks';
import { finishLeadOnce, type LeadFinalStatus } from '../../lib/leads/lead-final-status';
import { leadNotFound, nextCallingSlot } from '../leads/leads';

type LeadFinishedOutcome = LeadFinishedInput['outcome'];

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
  /** A journey's call node naming its own agent: the call is placed with it instead of the campaign's. */
  agentId?: string;
}

export type { DialedCall, PlacedCall } from '../calls/carrier-dialing';

/** Where one attempt of the lean ladder (leadLadderWorkflow) stands after attemptCall. */
export type AttemptStep =
  | DialedCall
  /** In its campaign's line queue (no free line, or the campaign not running): wait for lineGranted. */
  | { outcome: 'queued' }
  /** Outside the calling window in the lead's time zones: wait waitMs, then attempt again. */
  | { outcome: 'window_closed'; waitMs: number }
  /** The window never opens in every one of the lead's zones at once: it cannot be called. */
  | { outcome: 'no_calling_window' };

export interface AttemptCallInput extends PlaceCallInput {
  /** The lead's plan, as the attempt before answered it; without it the attempt reads it (the lead's first). */
  plan?: LeadPlan;
  /**
   * The call's end settles the lead when this attempt's outcome ends the ladder and has no aftermath (Call.settlesLeadOn,
   * outcomesSettledAtEnd): leadLadderWorkflowV2, whose run then learns it from the call's end (EndedCall.leadSettled)
   * and runs no settleLead. Never for a journey's call node (callKey), whose lead is its run's.
   */
  settleAtEnd?: boolean;
}

/** How a lead's attempt is settled (settleLead): the call's aftermath, and the lead finished or waiting for its rung. */
export interface SettleLeadInput {
  leadId: string;
  callKey?: string;
  /** The call that ended, if the attempt placed one. */
  ended?: { callId: string; outcome: CallOutcome };
  /** The ladder is over: the lead's final status (a journey's call node leaves the lead to its run). */
  finished?: { status: LeadFinalStatus; outcome: string | null; attempts: number };
  /** The ladder goes on: when its next rung is due (ISO 8601), shown while the lead waits for it. */
  nextAttemptAt?: string;
}

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

/** The task queue this activity runs on: the lead workflows' (null when called outside an activity, as some tests do). */
function runningTaskQueue(): string | null {
  try {
    return Context.current().info.taskQueue;
  } catch {
    return null;
  }
}

export function heartbeatIfInActivity(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // Not in an activity: nothing to report to.
  }
}

/** What a lead's attempt is placed, reconciled and settled with. */
export type CallDependencies = Pick<
  ActivityDependencies,
  | 'db'
  | 'calls'
  | 'temporal'
  | 'statusCallbackBaseUrl'
  | 'callEndDeadlineMs'
  | 'statusCallbackEvents'
  | 'carrierBreaker'
>;

/** Wakes whoever lines were handed to (outside an activity, as some tests call these, the sweep does it). */
async function handOver({ db, temporal }: Pick<CallDependencies, 'db' | 'temporal'>, granted: readonly GrantedLine[]) {
  const taskQueue = runningTaskQueue();
  if (granted.length && taskQueue) await handOverLines(db.sql, temporal, granted, taskQueue);
}

/**
 * A dial the carrier refused (it threw: 5xx, unreachable) is recorded for the campaign's breaker,
 * which looks at its window, and thrown on for Temporal to retry. Once the breaker has paused the
 * campaign, that retry withdraws the call (resumeOrWithdraw) and gives its line back. A refused setup
 * (the caller number, the account, the destination: CarrierRefusedSetupError) pauses the campaign at once (its
 * reason names the number), and the retry withdraws the call the same way: the lead keeps its attempt for after
 * the resume.
 */
async function dialOrRecordRefusal(dependencies: CallDependencies, attemptId: string, request: CarrierDialRequest) {
  const { db, calls } = dependencies;
  try {
    return await calls.dial(request);
  } catch (error) {
    // The number refused, not the carrier: nothing for the breaker.
    if (error instanceof CarrierRefusedNumberError) throw error;
    const { campaignId } = await db.call.findUniqueOrThrow({ where: { attemptId }, select: { campaignId: true } });
    if (error instanceof CarrierRefusedSetupError) {
      if (campaignId !== null) await pauseForRefusedSetup(dependencies, campaignId, error);
      throw error;
    }
    if (campaignId !== null) {
      await recordDialRefusal(dependencies, campaignId, attemptId, error);
      await considerCarrierBreaker(dependencies, campaignId);
    }
    throw error;
  }
}

/**
 * One attempt's line and dial, at most once. The Do-Not-Call list is read in the same statement that decides the
 * line. The call is recorded as dialing, with its line and the waiting workflow's id, before the carrier is asked;
 * a retry that finds it recorded asks the carrier what became of the attempt instead of dialing again.
 */
async function dialAttempt(
  dependencies: CallDependencies,
  { leadId, attempt, callKey, agentId }: PlaceCallInput,
  settlesLeadOn?: readonly CallOutcome[],
): Promise<DialedCall | { outcome: 'queued' }> {
  const { db, calls } = dependencies;
  const attemptId = attemptIdOf({ leadId, attempt, callKey });
  const decision = await takeLine(db.sql, {
    leadId,
    attempt,
    attemptId,
    provider: calls.name,
    workflowId: runningWorkflowId(),
    agentId,
    settlesLeadOn,
  });
  if (!decision) throw leadNotFound(leadId);
  let request: CarrierDialRequest;
  const recorded = decision.recorded;
  if (recorded) {
    if (recorded.status === 'ended')
      return { outcome: recorded.outcome as CallOutcome, callId: recorded.id, durationMs: recorded.durationMs };
    if (recorded.providerCallId) return dialed(dependencies, recorded.id, attemptId);
    const known = await calls.lookup({ attemptId });
    if (known) {
      await recordProviderCallId(dependencies, attemptId, known.providerCallId);
      return dialed(dependencies, recorded.id, attemptId);
    }
    const resumed = await resumeOrWithdraw(db, { leadId, attemptId });
    if (!resumed) throw leadNotFound(leadId);
    await handOver(dependencies, resumed.handedOver);
    // Withdrawn (the campaign is not running): the attempt asks again, as if never decided, and so takes its
    // place in the line queue to be handed a line once the campaign runs.
    if (resumed.verdict === 'campaign_on_hold')
      return dialAttempt(dependencies, { leadId, attempt, callKey, agentId }, settlesLeadOn);
    if (resumed.verdict !== 'started') return { outcome: resumed.verdict } as PlacedCall;
    request = await dialRequest(dependencies, attemptId, resumed.phone);
  } else {
    // A number on the Do-Not-Call list leaves the line queue, giving back a line handed to it there (an opt-out
    // wakes a queued attempt before any line is: docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
    if (decision.verdict === 'do_not_call') await handOver(dependencies, await leaveLineQueue(db.sql, attemptId));
    if (decision.verdict === 'queued') return { outcome: 'queued' };
    if (decision.verdict !== 'started' || !decision.call) return { outcome: decision.verdict } as PlacedCall;
    request = dialRequestOf(dependencies, attemptId, decision.phone, decision.call);
  }
  let providerCallId: string;
  try {
    ({ providerCallId } = await dialOrRecordRefusal(dependencies, attemptId, request));
  } catch (error) {
    if (!(error instanceof CarrierRefusedNumberError)) throw error;
    // No call was placed and none will be: the attempt ends as a call to a number that does not exist.
    const ended = await endCall(db, attemptId, { providerCallId: null, outcome: 'invalid_number', durationMs: null });
    await handOver(dependencies, ended.handedOver);
    return { outcome: 'invalid_number', callId: ended.id, durationMs: null };
  }
  const call = await recordProviderCallId(dependencies, attemptId, providerCallId);
  // The campaign was stopped while the carrier was being asked: its stop found no carrier id to hang up.
  if (call.campaignStatus === 'STOPPED') await hangUpCalls(db, calls, [{ attemptId, providerCallId }]);
  return dialed(dependencies, call.id, attemptId);
}

/** The campaign's ladder and window as they are when the lead starts, and the lead's time zones. */
export async function prepareLead(
  { db }: Pick<CallDependencies, 'db'>,
  { leadId }: { leadId: string },
): Promise<LeadPlan> {
  const lead = await readLeadPlan(db.sql, leadId);
  if (!lead) throw leadNotFound(leadId);
  return {
    ladder: lead.dialLadder ? withEveryOutcomeRule(dialLadderSchema.parse(lead.dialLadder)) : DEFAULT_DIAL_LADDER,
    window: lead.callingWindow ? callingWindowSchema.parse(lead.callingWindow) : DEFAULT_CALLING_WINDOW,
    timeZones: timeZonesOf(lead.phone),
  };
}

/**
 * Places one attempt's call through the carrier, at most once, and answers its call id at once: the
 * call's end arrives later as the carrier's terminal event (callEndedSignal). The run of leadDialWorkflow that
 * finds no line polls again (campaign_at_capacity); its place in the line queue is kept meanwhile.
 */
export async function dialCall(dependencies: CallDependencies, input: PlaceCallInput): Promise<DialedCall> {
  const step = await dialAttempt(dependencies, input);
  return step.outcome === 'queued' ? { outcome: 'campaign_at_capacity' } : step;
}

/**
 * One attempt of the lean ladder (leadLadderWorkflow), in one local activity: the lead's plan (read on its
 * first attempt), its calling window, then its line (or its place in the queue) and the dial, two statements
 * (lib/calls/call-lines.ts takeLine, then the carrier's id recorded). Outside the window, a line handed to the
 * attempt goes to the next in the queue, and the lead says when it will try again.
 */
export async function attemptCall(
  dependencies: CallDependencies,
  input: AttemptCallInput,
): Promise<{ step: AttemptStep; plan?: LeadPlan }> {
  const plan = input.plan ?? (await prepareLead(dependencies, { leadId: input.leadId }));
  const answer = (step: AttemptStep) => ({ step, ...(input.plan === undefined && { plan }) });
  const slot = await nextCallingSlot(dependencies, plan);
  if (slot === null || slot.waitMs > 0) {
    const waiting = slot
      ? { waitingFor: 'calling_window', nextAttemptAt: slot.at }
      : { waitingFor: null, nextAttemptAt: null };
    await handOver(
      dependencies,
      await leaveLineQueue(dependencies.db.sql, attemptIdOf(input), { leadId: input.leadId, ...waiting }),
    );
    return answer(slot ? { outcome: 'window_closed', waitMs: slot.waitMs } : { outcome: 'no_calling_window' });
  }
  const settlesLeadOn =
    input.settleAtEnd && input.callKey === undefined ? outcomesSettledAtEnd(plan.ladder, input.attempt) : undefined;
  return answer(await dialAttempt(dependencies, input, settlesLeadOn));
}

/**
 * Settles an attempt of the lean ladder in one local activity: the ended call's aftermath when it has one
 * (call intelligence, the carrier breaker); then the lead finished (its status, and its result webhook events
 * only when its workspace has an endpoint), or waiting for its next rung.
 */
export async function settleLead(
  dependencies: ActivityDependencies,
  { leadId, callKey, ended, finished, nextAttemptAt }: SettleLeadInput,
): Promise<void> {
  const { db } = dependencies;
  if (ended && hasAftermath(ended.outcome)) await afterCallEnded(dependencies, { callId: ended.callId });
  if (finished) {
    if (callKey !== undefined) return;
    // A lead final already (a stop cancelled it while this call was being hung up) keeps its status; its
    // lead.finished, owed all the same, reports that first status (lib/leads/lead-final-status.ts).
    const lead = await finishLeadOnce(db.sql, leadId, finished.status);
    if (!lead) throw leadNotFound(leadId);
    if (lead.hasEndpoint)
      await enqueueLeadFinished(dependencies, {
        leadId,
        outcome: finished.outcome as LeadFinishedOutcome,
        attempts: finished.attempts,
      });
  } else if (nextAttemptAt !== undefined) await markLeadWaitingForRung(db.sql, leadId, nextAttemptAt);
}

/**
 * Past the deadline without a terminal event: what the carrier knows now. An ended call is ended
 * through the same code as the event endpoint; one still on is left to wait (unless giveUp); one the
 * carrier does not know, or still on when giving up (hung up then), ends failed: lost.
 */
export async function reconcileCall(
  dependencies: Pick<CallDependencies, 'db' | 'calls' | 'temporal'>,
  { attemptId, giveUp }: { attemptId: string; giveUp: boolean },
): Promise<{ ended: EndedCall | null }> {
  const { db, calls } = dependencies;
  const call = await db.call.findUnique({ where: { attemptId } });
  if (!call) throw callNotFound(attemptId);
  if (call.status === 'ended')
    return {
      ended: {
        attemptId,
        callId: call.id,
        outcome: call.outcome as CallOutcome,
        durationMs: call.durationMs,
        ...(call.callbackAt && { callbackAt: call.callbackAt.toISOString() }),
      },
    };
  const known = await calls.lookup(call.providerCallId ? { providerCallId: call.providerCallId } : { attemptId });
  if (known && isTerminalCallState(known.status)) {
    // The call's own provider: a call on a carrier connection records the connection's (twilio, twilio-twin).
    const result = await applyCallEvent(db.sql, call.provider, {
      eventId: `lookup:${known.providerCallId}:${known.status}`,
      providerCallId: known.providerCallId,
      attemptId,
      status: known.status,
      answeredBy: known.answeredBy,
      durationMs: known.durationMs,
      reason: known.reason ?? null,
      occurredAt: new Date().toISOString(),
    });
    if (result.found) await handOver(dependencies, result.handedOver);
    if (result.found && result.ended) return { ended: result.ended };
  }
  if (known && !giveUp) return { ended: null };
  if (known) await hangUpCalls(db, calls, [{ attemptId, providerCallId: known.providerCallId }]);
  const lost = await endLostCall(db, attemptId);
  await handOver(dependencies, lost.handedOver);
  return { ended: lost.ended };
}

/**
 * The synchronous placeCall of runs recorded before the asynchronous carrier path (patched
 * 'async-carrier'): it dials as dialCall does, then waits, heartbeating, until the call has ended.
 * Its attempts (each a minute at most) add up to the same deadline as the workflow's wait: counted
 * from the call's start, past it the carrier is asked (reconcileCall) at every look, and given up
 * once the rechecks' time has passed too.
 */
export async function placeCall(dependencies: CallDependencies, input: PlaceCallInput): Promise<PlacedCall> {
  const placed = await dialCall(dependencies, input);
  if (placed.outcome !== 'dialed') return placed;
  for (;;) {
    heartbeatIfInActivity();
    const call = await dependencies.db.call.findUniqueOrThrow({ where: { id: placed.callId } });
    if (call.status === 'ended')
      return { outcome: call.outcome as CallOutcome, callId: call.id, durationMs: call.durationMs };
    const pastDeadlineMs = Date.now() - call.startedAt.getTime() - placed.deadlineMs;
    if (pastDeadlineMs > 0) {
      const giveUp = pastDeadlineMs >= placed.rechecks * placed.recheckMs;
      const { ended } = await reconcileCall(dependencies, { attemptId: placed.attemptId, giveUp });
      if (ended) return { outcome: ended.outcome, callId: ended.callId, durationMs: ended.durationMs };
    }
    await new Promise((resolve) => setTimeout(resolve, pastDeadlineMs > 0 ? placed.recheckMs / 10 : 200));
  }
}
