import { ApplicationFailure } from '@temporalio/common';
import type { CallOutcome } from '../../lib/calls/call-outcomes';
import { CarrierRefusedNumberError, CarrierRefusedSetupError } from '../../lib/calls/carrier';
import { CarrierConnectionRemovedError } from '../../lib/carriers/connection-carrier';
import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { prismaCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleTestCallHold, testCallTimeLimitMs } from '../../lib/credits/test-call-billing';
import { prismaSql } from '../../lib/run-sql';
import { ErrorCode } from '../../lib/error-codes';
import type { TestCallInput, TestCallResult } from '../../lib/test-calls/test-call';
import { endCall } from '../../lib/calls/call-lines';
import {
  dialed,
  dialRequest,
  recordProviderCallId,
  type CarrierDialingDependencies,
  type DialedCall,
} from '../calls/carrier-dialing';

/** The actor of the entries a test call's workflow writes. */
const TEST_CALL_BILLING_ACTOR: CreditActor = { type: 'system', id: 'testCallWorkflow' };

/**
 * The outcome of a test call whose dial is refused for good, never placed and not retried (docs/features/test-calls.md):
 * a number the carrier refuses is invalid_number, as a campaign's call; a refusal of the caller number, the account or
 * the destination's country (CarrierRefusedSetupError), or a connection removed since the call was recorded on it, is
 * failed: a campaign pauses itself on those,
 * a test call has no campaign, and its dial would only be refused again. Null: any other failure, retried.
 */
function neverPlacedOutcome(error: unknown): CallOutcome | null {
  if (error instanceof CarrierRefusedNumberError) return 'invalid_number';
  if (error instanceof CarrierRefusedSetupError || error instanceof CarrierConnectionRemovedError) return 'failed';
  return null;
}

/*
 * The activities of a test call (workflows/test-calls/test-call.ts). The call is recorded by the API (POST
 * /calls/test) before its workflow starts; it holds no campaign line. Waiting for its end and
 * reconciling it are the lead's (reconcileCall, activities/dial-ladder/calls.ts): both work by attempt id.
 */

/**
 * Places the test call through the carrier, at most once, and answers its call id at once. A retry
 * that finds the carrier already knows the attempt records its id instead of dialing again. The
 * Do-Not-Call list is read immediately before dialing (the API refused a listed number already; this
 * catches one listed since): such a call ends do_not_call, never dialed. The carrier is given the minutes the
 * call's hold covers as its time limit (docs/features/test-calls.md#length).
 */
export async function dialTestCall(
  dependencies: CarrierDialingDependencies,
  { callId }: TestCallInput,
): Promise<DialedCall> {
  const { db, calls } = dependencies;
  const call = await db.call.findFirst({ where: { id: callId, kind: 'test' } });
  if (!call)
    throw ApplicationFailure.create({
      type: ErrorCode.call_not_found,
      message: `no test call ${callId}`,
      nonRetryable: true,
    });
  if (call.status === 'ended')
    return { outcome: call.outcome as CallOutcome, callId: call.id, durationMs: call.durationMs };
  if (call.providerCallId) return dialed(dependencies, call.id, call.attemptId);
  try {
    // A call on a carrier connection is looked for by that carrier's rules for a lost dial answer
    // (lib/carriers/connection-carrier.ts): Twilio's listing, Telnyx's command_id (none found: dialed again).
    const known = await calls.lookup({ attemptId: call.attemptId });
    if (known) {
      await recordProviderCallId(dependencies, call.attemptId, known.providerCallId);
      return dialed(dependencies, call.id, call.attemptId);
    }
    const to = call.toNumber!; // the Call_kind_check constraint: a test call always has one
    const listed = await db.doNotCall.findUnique({
      where: { workspaceId_phone: { workspaceId: call.workspaceId, phone: to } },
    });
    if (listed) {
      await endCall(db, call.attemptId, { providerCallId: null, outcome: 'do_not_call', durationMs: null });
      return { outcome: 'do_not_call' };
    }
    // Recorded by the API for the carrier it was configured with; events are matched by the carrier that dials.
    // Not dialed yet, so no event can have been matched to it. A call on a connection keeps the connection's
    // provider, which its callbacks are matched by.
    if (call.carrierConnectionId === null && call.provider !== calls.name)
      await db.call.updateMany({ where: { id: call.id, providerCallId: null }, data: { provider: calls.name } });
    // The carrier ends the call when the minutes its hold covers run out: it never talks longer than it paid for.
    // Read here, not handed in by the workflow: the hold is the truth, and the workflow's histories are unchanged.
    const timeLimitMs = await testCallTimeLimitMs(prismaSql(db), {
      workspaceId: call.workspaceId,
      callId: call.id,
    });
    const { providerCallId } = await calls.dial({
      ...(await dialRequest(dependencies, call.attemptId, to)),
      timeLimitMs,
    });
    await recordProviderCallId(dependencies, call.attemptId, providerCallId);
    return dialed(dependencies, call.id, call.attemptId);
  } catch (error) {
    const outcome = neverPlacedOutcome(error);
    if (!outcome) throw error;
    const ended = await endCall(db, call.attemptId, { providerCallId: null, outcome, durationMs: null });
    return { outcome: ended.outcome as CallOutcome, callId: ended.id, durationMs: ended.durationMs };
  }
}

/**
 * Bills the ended test call (docs/features/credits.md): the hold the API took when it recorded the call is
 * posted with the call's started minutes, or voided when it never connected (no talk time: busy, no
 * answer, failed, do_not_call). Idempotent: a retry, after a crash or otherwise, finds the hold settled
 * and charges nothing more. A call recorded before billing existed has no hold: nothing is done. A
 * hold the sweep of abandoned holds settled meanwhile is left as it is.
 */
export async function billTestCall(
  { db }: Pick<CarrierDialingDependencies, 'db'>,
  ended: TestCallResult,
): Promise<void> {
  const call = await db.call.findFirst({
    where: { id: ended.callId, kind: 'test' },
    select: { workspaceId: true },
  });
  if (!call) return;
  try {
    await settleTestCallHold(
      prismaCreditStore(db),
      { workspaceId: call.workspaceId, callId: ended.callId, durationMs: ended.durationMs },
      TEST_CALL_BILLING_ACTOR,
    );
  } catch (error) {
    if (!(error instanceof HoldAlreadySettledError)) throw error;
  }
}
