import { randomUUID } from 'node:crypto';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { callTranscriptWhere } from './call-intelligence-store';

/**
 * Starts a re-run of a call's extraction and evaluation (workflows/call-intelligence/call-intelligence.ts) and answers its
 * job id. Each request is a job of its own; the caller sees it done when GET /calls/{id} answers
 * intelligence.jobId equal to it. A call without a transcript has nothing to extract from: 409.
 */
export async function rerunCallIntelligence(services: AppServices, principal: Principal, callId: string) {
  const call = await findOwned(principal, callId, (where) => callTranscriptWhere(services.db, where));
  if (!Array.isArray(call.transcript) || call.transcript.length === 0)
    throw new Refusal(ErrorCode.call_has_no_transcript);
  const requestedAt = new Date().toISOString();
  const { workflowId } = await startCallIntelligence(services.temporal, services.taskQueue, call.id, randomUUID());
  return { callId: call.id, jobId: workflowId, status: 'queued' as const, requestedAt };
}
