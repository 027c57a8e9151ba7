import { condition, setHandler } from '@temporalio/workflow';
import type { CallOnTheLine } from '../../activities/calls/carrier-dialing';
import type { EndedCall } from '../../lib/calls/ended-call';
import { callEndedSignal } from '../../lib/temporal/messages';

/**
 * The ends of the calls this workflow placed, kept by attempt id as callEndedSignal delivers them: an end
 * may be signalled before the dial activity has even answered.
 */
export function receiveEndedCalls(): Map<string, EndedCall> {
  const endedCalls = new Map<string, EndedCall>();
  setHandler(callEndedSignal, (ended) => {
    endedCalls.set(ended.attemptId, ended);
  });
  return endedCalls;
}

type ReconcileCall = (input: { attemptId: string; giveUp: boolean }) => Promise<{ ended: EndedCall | null }>;

/**
 * The asynchronous carrier path after the dial: the call's end is waited for as durable state. Past the
 * deadline the carrier is asked (reconcileCall), again every recheck while it says the call is still on,
 * and at the last recheck the call is given up. Shared by the lead's ladder and the test call; the
 * commands it records are those the ladder recorded before it moved here.
 */
export async function awaitCallEnd(
  placed: CallOnTheLine,
  endedCalls: ReadonlyMap<string, EndedCall>,
  reconcileCall: ReconcileCall,
): Promise<EndedCall> {
  let ended = endedCalls.get(placed.attemptId);
  for (let check = 0; !ended; check++) {
    await condition(() => endedCalls.has(placed.attemptId), check === 0 ? placed.deadlineMs : placed.recheckMs);
    ended = endedCalls.get(placed.attemptId);
    if (!ended)
      ended =
        (await reconcileCall({ attemptId: placed.attemptId, giveUp: check >= placed.rechecks })).ended ?? undefined;
  }
  return ended;
}
