import type { Request } from 'express';
import { ErrorCode } from '../../lib/error-codes';
import type { CallEvent } from '../../lib/calls/call-event';
import { createCallEventBatcher, type CallEventBatcher } from '../../lib/calls/call-event-batcher';
import { signalCallEnded } from '../../lib/temporal/calls';
import { handOverLines } from '../../lib/temporal/line-queue';
import { poolSql } from '../../lib/run-sql';
import { SIGNATURE_HEADER, verifyEventSignature } from '../../lib/calls/signature';
import { Refusal } from '../../lib/refusal';
import { rawBodyOf } from '../http/register-routes';
import type { AppServices } from '../app-services';
import type { SqlPool } from '../../lib/sql-pool';

/** One batcher per pool (per API process): the events it takes concurrently share statements and commits. */
const batchers = new WeakMap<SqlPool, CallEventBatcher>();
function batcherOf(pool: SqlPool): CallEventBatcher {
  let batcher = batchers.get(pool);
  if (!batcher) batchers.set(pool, (batcher = createCallEventBatcher(poolSql(pool))));
  return batcher;
}

/** 401 unless the raw body carries a valid, fresh signature by the provider's secret; nothing is read before. */
export function assertSignedByCarrier(req: Request, services: AppServices): void {
  const provider = String(req.params.provider);
  const secrets = services.telephonySigningSecrets ?? {};
  const secret = Object.hasOwn(secrets, provider) ? secrets[provider] : undefined;
  if (!secret || !verifyEventSignature(secret, rawBodyOf(req), req.get(SIGNATURE_HEADER)))
    throw new Refusal(ErrorCode.invalid_signature);
}

/**
 * Applies one status event (lib/calls/call-end.ts), batched with the events received at the same time
 * (lib/calls/call-event-batcher.ts), and, once the call has ended, signals its
 * workflow (lib/temporal/calls.ts) and wakes the queued lead its line was handed to (lib/temporal/line-queue.ts);
 * answered only after the change is committed. Unknown call: 404, nothing changed.
 */
export async function receiveCallEvent(
  services: AppServices,
  provider: string,
  event: CallEvent,
  /** The carrier connection that verified the event: only a call placed through it is found (ProviderCallEvent). */
  carrierConnectionId?: string,
) {
  const result = await batcherOf(services.sql).apply({ provider, event, carrierConnectionId });
  if (!result.found) throw new Refusal(ErrorCode.unknown_call);
  await Promise.all([
    result.ended && result.workflowId && signalCallEnded(services.temporal, result.workflowId, result.ended),
    result.handedOver.length &&
      handOverLines(poolSql(services.sql), services.temporal, result.handedOver, services.taskQueue),
  ]);
  return { received: true as const, applied: result.applied };
}
