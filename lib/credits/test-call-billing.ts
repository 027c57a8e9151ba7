import { MAX_CALL_LENGTH_MS } from '../calls/call-deadline';
import type { RunSql } from '../run-sql';
import { entryByKey } from './apply-entry';
import { holdIn, settleHold } from './holds';
import type { CreditActor, CreditStore } from './ledger-store';
import { creditString, creditUnits } from './money';
import { startedMinutes, testCallMinuteUnits, testCallPriceUnits } from './price-table';

/**
 * How a test call is billed (docs/features/credits.md, "Test calls"): a hold when the API records the call, before it
 * is dialed, of one minute at least and up to the longest call (MAX_CALL_LENGTH_MS of lib/calls/call-deadline.ts,
 * handed in by the API) as the balance allows; at the terminal event it is posted with the call's started minutes (at
 * most what it holds), or voided when the call never connected (busy, no answer, failed, do_not_call, never started).
 */
export const testCallHoldKey = (callId: string) => `test_call:${callId}`;

/**
 * The whole minutes a hold of `heldCredits` covers at the test call's price (a hold of one minute's price: one minute),
 * for a test call and a test session alike: what they may talk on what they paid for.
 */
export const coveredMinutes = (heldCredits: string): number =>
  Math.floor(Math.abs(creditUnits(heldCredits)) / testCallMinuteUnits());

/**
 * How long the test call may talk: the minutes its hold covers (never over the longest call), the limit the carrier
 * is dialed with (Twilio's timeLimit, Telnyx's time_limit_secs, the simulated carrier's) and the relay socket's
 * closing line is timed by. Before issue 40 a test call was dialed with the longest call whatever it held, so a
 * one-minute hold talked 30 minutes and was charged one. Undefined: no hold (a call recorded before billing existed),
 * dialed with the longest call as then.
 */
export async function testCallTimeLimitMs(
  sql: RunSql,
  call: { workspaceId: string; callId: string },
): Promise<number | undefined> {
  const hold = await entryByKey(sql, call.workspaceId, testCallHoldKey(call.callId));
  if (!hold || hold.kind !== 'hold') return undefined;
  return Math.min(MAX_CALL_LENGTH_MS, Math.max(1, coveredMinutes(hold.amount)) * 60_000);
}

/** Takes the test call's hold inside the transaction that records the call; InsufficientCreditsError: not recorded. */
export function holdTestCall(
  sql: RunSql,
  call: { workspaceId: string; callId: string; longestCallMs: number },
  actor: CreditActor,
) {
  const { workspaceId, callId } = call;
  const minute = testCallMinuteUnits();
  return holdIn(sql, {
    workspaceId,
    heldFor: 'test_call',
    amount: creditString(minute),
    upTo: creditString(minute * Math.max(1, startedMinutes(call.longestCallMs))),
    reference: { type: 'call', id: callId },
    actor,
    idempotencyKey: testCallHoldKey(callId),
  });
}

export interface EndedTestCall {
  workspaceId: string;
  callId: string;
  /** Talk time; null or 0: never connected. */
  durationMs: number | null;
}

/**
 * Settles an ended test call's hold: posted with its started minutes, capped at what the hold reserved
 * (the balance when it was dialed allowed no more), or voided when it never connected. A call placed
 * before billing existed has no hold: nothing is done (null). Idempotent, as postHold and voidHold.
 */
export function settleTestCallHold(store: CreditStore, call: EndedTestCall, actor: CreditActor) {
  const request = { workspaceId: call.workspaceId, idempotencyKey: testCallHoldKey(call.callId), actor };
  return settleHold(store, request, (heldUnits) => Math.min(testCallPriceUnits(call.durationMs), heldUnits));
}
