import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { TestCallInput, TestCallResult } from '../lib/calls/test-call';
import { awaitCallEnd, receiveEndedCalls } from './call-on-carrier';

// As the lead's call (workflows/lead-dial.ts): short activities, retried; a dead worker's missing
// heartbeat hands one to another worker after 10 s.
const { dialTestCall, reconcileCall, afterCallEnded, billTestCall } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * One test call (POST /calls/test), already recorded by the API: placed through the carrier with its
 * agent, outside any campaign (no line is taken), then waited for as the lead's call is: the terminal
 * event's callEndedSignal, or past the deadline the carrier's lookup. The ended call gets its call
 * intelligence as any call does (afterCallEnded), is handed to the billing seam (billTestCall, a no-op
 * until billing exists), and the workflow ends with the call's outcome.
 */
export async function testCallWorkflow({ callId }: TestCallInput): Promise<TestCallResult> {
  const endedCalls = receiveEndedCalls();
  const placed = await dialTestCall({ callId });
  let result: TestCallResult;
  if (placed.outcome === 'dialed') {
    const ended = await awaitCallEnd(placed, endedCalls, reconcileCall);
    result = { callId, outcome: ended.outcome, durationMs: ended.durationMs };
  } else if ('callId' in placed) {
    // A retried dial that found the call already ended.
    result = { callId, outcome: placed.outcome, durationMs: placed.durationMs ?? null };
  } else {
    // do_not_call (listed after the API took the call): never dialed, nothing to bill.
    return { callId, outcome: placed.outcome, durationMs: null };
  }
  // As a lead's call: an answered or voicemail call gets its transcript and call intelligence (no campaign: no breaker).
  await afterCallEnded({ callId });
  await billTestCall(result);
  return result;
}
