import { CancellationScope, deprecatePatch, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { TestCallInput, TestCallResult } from '../../lib/test-calls/test-call';
import type { EndedCall } from '../../lib/calls/ended-call';
import { awaitCallEnd, receiveEndedCalls } from '../calls/call-on-carrier';
import { callSteps } from '../../lib/temporal/retry-policies';
import { PATCHES } from '../../lib/temporal/patches';

// As the lead's call (workflows/dial-ladder/legacy/lead-dial.ts): short activities, retried; a dead worker's missing
// heartbeat hands one to another worker after 10 s.
const { dialTestCall, reconcileCall, afterCallEnded, billTestCall } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: callSteps,
});

/** The call placed and waited for: its result, and whether it reached the line (do_not_call: never dialed). */
async function placeAndAwait(
  callId: string,
  endedCalls: Map<string, EndedCall>,
): Promise<{ result: TestCallResult; dialed: boolean }> {
  const placed = await dialTestCall({ callId });
  if (placed.outcome === 'dialed') {
    const ended = await awaitCallEnd(placed, endedCalls, reconcileCall);
    return { result: { callId, outcome: ended.outcome, durationMs: ended.durationMs }, dialed: true };
  }
  // A retried dial that found the call already ended.
  if ('callId' in placed)
    return { result: { callId, outcome: placed.outcome, durationMs: placed.durationMs ?? null }, dialed: true };
  // do_not_call (listed after the API took the call): never dialed.
  return { result: { callId, outcome: placed.outcome, durationMs: null }, dialed: false };
}

/**
 * One test call (POST /calls/test), already recorded by the API with its credit hold: placed through the
 * carrier with its agent, outside any campaign (no line is taken), then waited for as the lead's call is:
 * the terminal event's callEndedSignal, or past the deadline the carrier's lookup. At its end the call is
 * billed (billTestCall: the hold posted by started minutes, or voided when it never connected, do_not_call
 * included), then gets its call intelligence as any call does (afterCallEnded); the workflow ends with the
 * call's outcome. Should the call fail for good, its hold is voided before the workflow fails.
 */
export async function testCallWorkflow({ callId }: TestCallInput): Promise<TestCallResult> {
  // Retired (docs/patch-register.md#retiring-a-patch): no run that took the unbilled path is open. The call stays
  // while runs that recorded the marker may be open, as a run that recorded it replays only with a call for its id.
  deprecatePatch(PATCHES.testCallBilling.id);
  const endedCalls = receiveEndedCalls();
  let placed: { result: TestCallResult; dialed: boolean };
  try {
    placed = await placeAndAwait(callId, endedCalls);
  } catch (error) {
    await CancellationScope.nonCancellable(() => billTestCall({ callId, outcome: 'failed', durationMs: null }));
    throw error;
  }
  await billTestCall(placed.result);
  // As a lead's call: an answered or voicemail call gets its transcript and call intelligence (no campaign: no breaker).
  if (placed.dialed) await afterCallEnded({ callId });
  return placed.result;
}
