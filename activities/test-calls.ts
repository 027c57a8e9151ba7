import { ApplicationFailure } from '@temporalio/common';
import type { CallOutcome } from '../lib/call-outcomes';
import { ErrorCode } from '../lib/error-codes';
import type { TestCallInput, TestCallResult } from '../lib/calls/test-call';
import { endCall } from './call-lines';
import { createCarrierDialing, type DialedCall } from './carrier-dialing';
import type { ActivityDependencies } from './index';

/**
 * The activities of a test call (workflows/test-call.ts). The call is recorded by the API (POST
 * /calls/test) before its workflow starts; it holds no campaign line. Waiting for its end and
 * reconciling it are the lead's (reconcileCall, activities/calls.ts): both work by attempt id.
 */
export function createTestCallActivities(dependencies: ActivityDependencies) {
  const { db, calls } = dependencies;
  const { dialed, recordProviderCallId, dialRequest } = createCarrierDialing(dependencies);
  return {
    /**
     * Places the test call through the carrier, at most once, and answers its call id at once. A retry
     * that finds the carrier already knows the attempt records its id instead of dialing again. The
     * Do-Not-Call list is read immediately before dialing (the API refused a listed number already; this
     * catches one listed since): such a call ends do_not_call, never dialed.
     */
    async dialTestCall({ callId }: TestCallInput): Promise<DialedCall> {
      const call = await db.call.findFirst({ where: { id: callId, kind: 'test' } });
      if (!call)
        throw ApplicationFailure.create({
          type: ErrorCode.call_not_found,
          message: `no test call ${callId}`,
          nonRetryable: true,
        });
      if (call.status === 'ended')
        return { outcome: call.outcome as CallOutcome, callId: call.id, durationMs: call.durationMs };
      if (call.providerCallId) return dialed(call.id, call.attemptId);
      const known = await calls.lookup({ attemptId: call.attemptId });
      if (known) {
        await recordProviderCallId(call.attemptId, known.providerCallId);
        return dialed(call.id, call.attemptId);
      }
      const to = call.toNumber!; // the Call_kind_check constraint: a test call always has one
      const listed = await db.doNotCall.findUnique({
        where: { workspaceId_phone: { workspaceId: call.workspaceId, phone: to } },
      });
      if (listed) {
        await endCall(db, call.attemptId, { providerCallId: null, outcome: 'do_not_call', durationMs: null });
        return { outcome: 'do_not_call' };
      }
      // Recorded by the API for the carrier it was configured with; events are matched by the carrier
      // that dials. Not dialed yet, so no event can have been matched to it.
      if (call.provider !== calls.name)
        await db.call.updateMany({ where: { id: call.id, providerCallId: null }, data: { provider: calls.name } });
      const { providerCallId } = await calls.dial(await dialRequest(call.attemptId, to));
      await recordProviderCallId(call.attemptId, providerCallId);
      return dialed(call.id, call.attemptId);
    },

    /**
     * The billing seam of test calls (spec: placing test calls is billed). A no-op until the credits
     * issue gives the workspace a wallet and a ledger: it is where the ended call will be charged, once
     * per call (the workflow calls it once, after the end). Nothing is charged or recorded now.
     */
    async billTestCall(_ended: TestCallResult): Promise<void> {},
  };
}
