import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../lib/error-codes';
import type { ActivityDependencies } from './index';
import type { CallOutcome } from './providers/telephony';

export interface PlaceCallInput {
  leadId: string;
  /** 1-based rung of the dial ladder. */
  attempt: number;
}

export interface PlacedCall {
  callId: string;
  outcome: CallOutcome;
  durationMs: number;
}

export type LeadFinalStatus = 'completed' | 'failed' | 'cancelled';

export function createCallActivities({ db, calls }: ActivityDependencies) {
  return {
    /**
     * Dials a lead once per attempt. A retry after a crash finds the recorded call and returns it,
     * so one attempt never becomes two dials.
     */
    async placeCall({ leadId, attempt }: PlaceCallInput): Promise<PlacedCall> {
      const recorded = await db.call.findUnique({ where: { leadId_attempt: { leadId, attempt } } });
      if (recorded) return { callId: recorded.id, outcome: recorded.outcome as CallOutcome, durationMs: recorded.durationMs };
      const lead = await db.lead.findUnique({ where: { id: leadId }, select: { phone: true } });
      if (!lead) throw ApplicationFailure.create({ type: ErrorCode.lead_not_found, message: `lead ${leadId} not found`, nonRetryable: true });
      await db.lead.update({ where: { id: leadId }, data: { status: 'dialing' } });
      const startedAt = new Date();
      const result = await calls.dial({ to: lead.phone, idempotencyKey: `${leadId}:${attempt}` });
      const call = await db.call.upsert({
        where: { leadId_attempt: { leadId, attempt } },
        update: {},
        create: {
          leadId,
          attempt,
          provider: calls.name,
          providerCallId: result.providerCallId,
          outcome: result.outcome,
          durationMs: result.durationMs,
          startedAt,
          endedAt: new Date(startedAt.getTime() + result.durationMs),
        },
      });
      return { callId: call.id, outcome: call.outcome as CallOutcome, durationMs: call.durationMs };
    },

    async finishLead({ leadId, status }: { leadId: string; status: LeadFinalStatus }): Promise<void> {
      await db.lead.update({ where: { id: leadId }, data: { status } });
    },
  };
}
