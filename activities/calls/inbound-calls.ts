import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../../lib/error-codes';
import { dialed, type CallOnTheLine, type CarrierDialingDependencies } from './carrier-dialing';

/**
 * The inbound call of the attempt as its watching workflow waits for it (workflows/calls/inbound-call.ts): the deadline
 * an outbound call's end is waited for, then the carrier's lookup. The API recorded the call before it started the
 * workflow; none is a setup error, not retried.
 */
export async function watchInboundCall(
  dependencies: Pick<CarrierDialingDependencies, 'db' | 'callEndDeadlineMs'>,
  { attemptId }: { attemptId: string },
): Promise<CallOnTheLine> {
  const call = await dependencies.db.call.findUnique({ where: { attemptId }, select: { id: true } });
  if (!call)
    throw ApplicationFailure.create({
      type: ErrorCode.unknown_call,
      message: `inbound call of attempt ${attemptId} not found`,
      nonRetryable: true,
    });
  return dialed(dependencies, call.id, attemptId);
}
