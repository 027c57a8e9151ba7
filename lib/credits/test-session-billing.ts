import type { RunSql } from '../run-sql';
import { TEST_SESSION_REFERENCE } from '../test-sessions/test-session-store';
import { holdIn, settleHold } from './holds';
import type { CreditActor, CreditStore } from './ledger-store';
import { creditString } from './money';
import { coveredMinutes } from './test-call-billing';
import { startedMinutes, testCallMinuteUnits, testCallPriceUnits } from './price-table';

/**
 * How a web test session is billed (docs/features/test-sessions.md#billing): as a test call, per started minute at the
 * test call's price (PRICE_TABLE.test_call, charged as kind test_call with reference test_session), through a hold.
 * The hold is taken when the session is created, one minute at least and up to the session's maximum length as the
 * balance allows; when the session ends it is posted with the started minutes from the socket's opening to its end
 * (at most what it holds), or voided when the socket never opened. The hold's key makes it once: whoever settles it
 * first (the socket's end, the API's stop, or the worker's sweep of abandoned holds) charges, and the others find it
 * settled.
 */
export const testSessionHoldKey = (sessionId: string) => `test_session:${sessionId}`;

/**
 * The minutes a session may talk on what its hold reserved: the whole minutes it covers (a hold of one minute's price,
 * one minute). The socket ends the session then (max_length, after a closing line), so a session never talks longer
 * than it paid for; before issue 40 a one-minute hold let it talk its full 15 minutes.
 */
export const coveredSessionMinutes = coveredMinutes;

/** Takes the session's hold inside the transaction that records it; InsufficientCreditsError: not recorded. */
export function holdTestSession(
  sql: RunSql,
  session: { workspaceId: string; sessionId: string; longestMs: number },
  actor: CreditActor,
) {
  const minute = testCallMinuteUnits();
  return holdIn(sql, {
    workspaceId: session.workspaceId,
    heldFor: 'test_call',
    amount: creditString(minute),
    upTo: creditString(minute * Math.max(1, startedMinutes(session.longestMs))),
    reference: { type: TEST_SESSION_REFERENCE, id: session.sessionId },
    actor,
    idempotencyKey: testSessionHoldKey(session.sessionId),
  });
}

/**
 * Settles an ended session's hold: posted with its started minutes (capped at what the hold reserved), or voided when
 * it never connected (durationMs null). Idempotent, as postHold and voidHold.
 */
export function settleTestSessionHold(
  store: CreditStore,
  session: { workspaceId: string; sessionId: string; durationMs: number | null },
  actor: CreditActor,
) {
  const request = { workspaceId: session.workspaceId, idempotencyKey: testSessionHoldKey(session.sessionId), actor };
  return settleHold(store, request, (heldUnits) => Math.min(testCallPriceUnits(session.durationMs), heldUnits));
}
