import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { endCall } from './call-lines';
import type { Prisma } from '../generated/prisma/client';
import { callEndedSignal } from '../workflows/messages';
import type { CallOutcome } from '../lib/call-outcomes';
import type { Database } from '../lib/database';
import type { CallEvent } from '../lib/telephony/call-event';
import { callStateRank, isTerminalCallState, type CarrierCallState } from '../lib/telephony/call-states';
import type { EndedCall } from '../lib/telephony/ended-call';

/**
 * How a terminal carrier state becomes the call's outcome (README "Outcomes"):
 * completed by a human -> answered, by a machine -> voicemail (unknown: answered); busy -> busy;
 * no-answer -> no_answer; failed -> invalid_number when the carrier's reason says so, else failed;
 * canceled (we hung up: the campaign was stopped) -> what the call had reached: answered or voicemail
 * once picked up, no_answer while it was still ringing.
 */
export function outcomeOfTerminalState(
  status: CarrierCallState,
  answeredBy: 'human' | 'machine' | null,
  reason: string | null,
): CallOutcome {
  switch (status) {
    case 'completed':
      return answeredBy === 'machine' ? 'voicemail' : 'answered';
    case 'busy':
      return 'busy';
    case 'failed':
      return reason === 'invalid_number' ? 'invalid_number' : 'failed';
    case 'canceled':
      return answeredBy === 'machine' ? 'voicemail' : answeredBy === 'human' ? 'answered' : 'no_answer';
    default:
      return 'no_answer';
  }
}

interface LockedCall {
  id: string;
  attemptId: string;
  status: string;
  carrierStatus: CarrierCallState | null;
  answeredBy: 'human' | 'machine' | null;
  outcome: CallOutcome | null;
  durationMs: number | null;
  workflowId: string | null;
}

export type AppliedCallEvent =
  | { found: false }
  | {
      found: true;
      /** The event moved the call (false: a duplicate, or late, or out of order). */
      applied: boolean;
      /** The call has ended (by this event or before): its waiting workflow is to be told. */
      ended: EndedCall | null;
      workflowId: string | null;
    };

const endedOf = (call: {
  attemptId: string;
  id: string;
  outcome: string | null;
  durationMs: number | null;
}): EndedCall => ({
  attemptId: call.attemptId,
  callId: call.id,
  outcome: call.outcome as CallOutcome,
  durationMs: call.durationMs,
});

/**
 * One carrier event applied to its call, in one transaction: recorded once per (provider, eventId)
 * (a second delivery changes nothing), the call's state moved only forward (lib/telephony/call-states.ts),
 * and a terminal state ends the call and releases its line (endCall, once). The event endpoint and
 * reconciliation (a lookup after the deadline) both end calls through here.
 */
export async function applyCallEvent(db: Database, provider: string, event: CallEvent): Promise<AppliedCallEvent> {
  return db.$transaction(async (tx) => {
    const [call] = await tx.$queryRawUnsafe<LockedCall[]>(
      `SELECT id::text, "attemptId", status, "carrierStatus", "answeredBy", outcome, "durationMs", "workflowId"
         FROM "Call"
        WHERE provider = $1 AND ${event.attemptId ? `"attemptId" = $3 AND ("providerCallId" IS NULL OR "providerCallId" = $2)` : `"providerCallId" = $2`}
        FOR UPDATE`,
      provider,
      event.providerCallId,
      ...(event.attemptId ? [event.attemptId] : []),
    );
    if (!call) return { found: false };
    const moves =
      call.status === 'dialing' &&
      (call.carrierStatus === null || callStateRank(event.status) > callStateRank(call.carrierStatus));
    const inserted = await tx.callEvent.createMany({
      data: [
        {
          provider,
          eventId: event.eventId,
          callId: call.id,
          status: event.status,
          applied: moves,
          occurredAt: new Date(event.occurredAt),
          payload: event as unknown as Prisma.InputJsonValue,
        },
      ],
      skipDuplicates: true,
    });
    const applied = moves && inserted.count === 1;
    let ended = call.status === 'ended' ? endedOf(call) : null;
    if (applied) {
      const answeredBy = event.answeredBy ?? call.answeredBy;
      await tx.call.update({
        where: { id: call.id },
        data: {
          carrierStatus: event.status,
          answeredBy,
          providerCallId: event.providerCallId,
          lastEventAt: new Date(event.occurredAt),
        },
      });
      if (isTerminalCallState(event.status)) {
        const outcome = outcomeOfTerminalState(event.status, answeredBy, event.reason ?? null);
        const done = await endCall(tx, call.attemptId, {
          providerCallId: event.providerCallId,
          outcome,
          durationMs: event.durationMs ?? null,
        });
        ended = endedOf({ ...done, attemptId: call.attemptId });
      }
    }
    return { found: true, applied, ended, workflowId: call.workflowId };
  });
}

/**
 * Tells the call's workflow that it ended. Sent again for every duplicate of the terminal event, so an
 * API that died between the commit and the signal is healed by the carrier's retry; a workflow that has
 * already finished needs nothing.
 */
export async function signalCallEnded(temporal: Client, workflowId: string, ended: EndedCall): Promise<void> {
  try {
    await temporal.workflow.getHandle(workflowId).signal(callEndedSignal, ended);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}

/**
 * A call neither its events nor its carrier can account for (README "Deadline and reconciliation"):
 * it ends failed, and its line is released.
 */
export async function endLostCall(db: Database, attemptId: string): Promise<EndedCall> {
  const done = await endCall(db, attemptId, { providerCallId: null, outcome: 'failed', durationMs: null });
  return endedOf({ ...done, attemptId });
}
