import type { Request } from 'express';
import { ErrorCode } from '../../lib/error-codes';
import type { CallEvent } from '../../lib/calls/call-event';
import { applyCallEvent } from '../../lib/calls/call-end';
import { signalCallEnded } from '../../lib/temporal/calls';
import { handOverLines } from '../../lib/temporal/line-queue';
import { poolSql } from '../../lib/run-sql';
import { SIGNATURE_HEADER, verifyEventSignature } from '../../lib/calls/signature';
import { Refusal } from '../../lib/refusal';
import { rawBodyOf } from '../http/register-routes';
import type { AppServices } from '../app-services';

/** 401 unless the raw body carries a valid, fresh signature by the provider's secret; nothing is read before. */
export function assertSignedByCarrier(req: Request, services: AppServices): void {
  const provider = String(req.params.provider);
  const secrets = services.telephonySigningSecrets ?? {};
  const secret = Object.hasOwn(secrets, provider) ? secrets[provider] : undefined;
  if (!secret || !verifyEventSignature(secret, rawBodyOf(req), req.get(SIGNATURE_HEADER)))
    throw new Refusal(ErrorCode.invalid_signature);
}

/**
 * Applies one status event (lib/calls/call-end.ts) and, once the call has ended, signals its
 * workflow (lib/temporal/calls.ts) and wakes the queued lead its line was handed to (lib/temporal/line-queue.ts);
 * answered only after the change is committed. Unknown call: 404, nothing changed.
 */
export async function receiveCallEvent(services: AppServices, provider: string, event: CallEvent) {
  const result = await applyCallEvent(poolSql(services.sql), provider, event);
  if (!result.found) throw new Refusal(ErrorCode.unknown_call);
  await Promise.all([
    result.ended && result.workflowId && signalCallEnded(services.temporal, result.workflowId, result.ended),
    result.handedOver.length &&
      handOverLines(poolSql(services.sql), services.temporal, result.handedOver, services.taskQueue),
  ]);
  return { received: true as const, applied: result.applied };
}
