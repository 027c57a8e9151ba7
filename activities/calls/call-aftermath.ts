import { Context } from '@temporalio/activity';
import { CARRIER_FAILURE_OUTCOMES, CONVERSATION_OUTCOMES } from '../../lib/calls/call-aftermath';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { considerCarrierBreaker, type CarrierBreakerDependencies } from '../dial-ladder/carrier-breaker';

export type CallAftermathDependencies = CarrierBreakerDependencies;

/**
 * What follows the end of a call, run by the workflow that waited for it (so whichever way the call ended, by its
 * terminal event or by reconciliation, and retried by Temporal until done): an answered or voicemail call gets its
 * call intelligence (started once per call: a second start is refused by its workflow id, harmlessly); a call of a
 * running campaign makes its carrier breaker look at the window, and pause the campaign if it trips. Answers what it
 * did.
 */
export async function afterCallEnded(
  dependencies: CallAftermathDependencies,
  { callId }: { callId: string },
): Promise<{ intelligenceStarted: boolean; breakerTripped: boolean }> {
  const { db, temporal } = dependencies;
  const call = await db.call.findUniqueOrThrow({
    where: { id: callId },
    select: { id: true, outcome: true, campaignId: true },
  });
  const intelligenceStarted = CONVERSATION_OUTCOMES.includes(call.outcome as never);
  if (intelligenceStarted) await startCallIntelligence(temporal, Context.current().info.taskQueue, call.id);
  const breakerTripped =
    call.campaignId !== null && CARRIER_FAILURE_OUTCOMES.includes(call.outcome as never)
      ? await considerCarrierBreaker(dependencies, call.campaignId)
      : false;
  return { intelligenceStarted, breakerTripped };
}
