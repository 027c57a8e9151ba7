import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { InboundCallInput, InboundCallResult } from '../../lib/calls/inbound-call-watch';
import { callSteps } from '../../lib/temporal/retry-policies';
import { awaitCallEnd, receiveEndedCalls } from './call-on-carrier';

// As a test call's (workflows/test-calls/test-call.ts): short activities, retried.
const { watchInboundCall, reconcileCall, afterCallEnded } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: callSteps,
});

/**
 * An inbound call, from the moment the product answered it until it ends (docs/features/carriers/inbound.md#a-lost-end):
 * its end event signals callEnded, as an outbound call's does; past the deadline an outbound call waits, the carrier is
 * asked for the call's state (reconcileCall), again while it is still on, and the call is given up at the last
 * recheck. So a lost end callback still ends the call, gives back its campaign's line and settles its lead. Then its
 * aftermath, as any call's (afterCallEnded: its call intelligence; a second start is refused by its workflow id).
 */
export async function inboundCallWorkflow({ attemptId }: InboundCallInput): Promise<InboundCallResult> {
  const endedCalls = receiveEndedCalls();
  const watched = await watchInboundCall({ attemptId });
  const ended = await awaitCallEnd(watched, endedCalls, reconcileCall);
  await afterCallEnded({ callId: ended.callId });
  return { callId: ended.callId, outcome: ended.outcome, durationMs: ended.durationMs };
}
