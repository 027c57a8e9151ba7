import type { CallOutcome } from '../../lib/calls/call-outcomes';
import {
  DEFAULT_CALL_END_DEADLINE_MS,
  RECHECK_AFTER_DEADLINE_MS,
  RECHECKS_AFTER_DEADLINE,
} from '../../lib/calls/call-deadline';
import type { ActivityDependencies } from '../dependencies';
import type { CarrierAgent, CarrierDialRequest } from '../../lib/calls/carrier';
import { DEFAULT_STATUS_CALLBACK_EVENTS } from '../../lib/calls/call-states';
import type { DialRequestRow } from '../../lib/calls/call-lines';
import { readDialRequestRow, recordProviderCallIdOnce } from '../../lib/calls/call-store';
import { prismaSql } from '../../lib/run-sql';

/**
 * do_not_call: the number is on the workspace's list. campaign_on_hold: the campaign is not running
 * (not started yet, or paused): nothing was dialed, ask again once it changes. campaign_at_capacity:
 * the campaign has its cap of calls in flight: ask again shortly. campaign_stopped: final.
 */
export type PlacedCall =
  | { outcome: CallOutcome; callId: string; durationMs?: number | null }
  | { outcome: 'do_not_call' | 'campaign_on_hold' | 'campaign_stopped' | 'campaign_at_capacity' };

/** A call the carrier took: its end comes as callEndedSignal, or by reconcileCall past deadlineMs. */
export interface CallOnTheLine {
  outcome: 'dialed';
  callId: string;
  attemptId: string;
  deadlineMs: number;
  recheckMs: number;
  rechecks: number;
}

/**
 * dialed: the carrier took the call; its end comes as callEndedSignal, or by reconcileCall once
 * deadlineMs has passed (then every recheckMs, rechecks times). An attempt whose call had already
 * ended answers its outcome; one that was not placed answers why, as PlacedCall does.
 */
export type DialedCall = CallOnTheLine | PlacedCall;

/** Who the agent talks to: the call's lead, or the lead a test call was placed for. */
function leadOfCall(call: {
  lead: { name: string | null; fields: unknown } | null;
  testLead: unknown;
}): CarrierDialRequest['lead'] {
  const lead = call.lead ?? (call.testLead as { name?: string | null; fields?: unknown } | null);
  return { name: lead?.name ?? null, fields: (lead?.fields ?? {}) as Record<string, unknown> };
}

/**
 * What placing a recorded call through the carrier takes, for a lead's attempt (activities/dial-ladder/calls.ts) and
 * a test call (activities/test-calls/test-calls.ts) alike: the dial request, the carrier's id recorded once, and the
 * deadline the waiting workflow is given.
 */
export type CarrierDialingDependencies = Pick<
  ActivityDependencies,
  'db' | 'calls' | 'statusCallbackBaseUrl' | 'callEndDeadlineMs' | 'statusCallbackEvents'
>;

/** The call the carrier took, with the deadline its waiting workflow is given. */
export function dialed(
  { callEndDeadlineMs = DEFAULT_CALL_END_DEADLINE_MS }: Pick<CarrierDialingDependencies, 'callEndDeadlineMs'>,
  callId: string,
  attemptId: string,
): CallOnTheLine {
  return {
    outcome: 'dialed',
    callId,
    attemptId,
    deadlineMs: callEndDeadlineMs,
    recheckMs: Math.min(RECHECK_AFTER_DEADLINE_MS, callEndDeadlineMs),
    rechecks: RECHECKS_AFTER_DEADLINE,
  };
}

/**
 * The carrier's id recorded once, and the call's campaign's status after that (lib/calls/call-store.ts
 * recordProviderCallIdOnce: a stop being committed is seen, one that comes after finds the id).
 */
export async function recordProviderCallId(
  { db }: Pick<CarrierDialingDependencies, 'db'>,
  attemptId: string,
  providerCallId: string,
): Promise<{ id: string; campaignId: string | null; campaignStatus: string | null }> {
  const call = await recordProviderCallIdOnce(db.sql, attemptId, providerCallId);
  if (!call) throw new Error(`call of attempt ${attemptId} not found`);
  return call;
}

/** What the carrier is told: the numbers, the agent and the lead for the conversation, where to report. One statement. */
export async function dialRequest(
  dependencies: CarrierDialingDependencies,
  attemptId: string,
  to: string,
): Promise<CarrierDialRequest> {
  const call = await readDialRequestRow(prismaSql(dependencies.db), attemptId);
  if (!call) throw new Error(`call of attempt ${attemptId} not found`);
  return dialRequestOf(dependencies, attemptId, to, call);
}

/** The dial request of a call whose row was read with its decision (lib/calls/call-lines.ts takeLine). */
export function dialRequestOf(
  { calls, statusCallbackBaseUrl, statusCallbackEvents }: CarrierDialingDependencies,
  attemptId: string,
  to: string,
  call: DialRequestRow,
): CarrierDialRequest {
  return {
    attemptId,
    from: call.fromNumber,
    to,
    carrierConnectionId: call.carrierConnectionId,
    agent: call.agentId
      ? {
          id: call.agentId,
          language: call.language!,
          voiceId: call.voiceId!,
          script: call.script as CarrierAgent['script'],
          extractionFields: call.extractionFields as CarrierAgent['extractionFields'],
        }
      : null,
    lead: leadOfCall({
      lead: call.hasLead ? { name: call.leadName, fields: call.leadFields } : null,
      testLead: call.testLead,
    }),
    statusCallbackUrl: `${statusCallbackBaseUrl}/telephony/${encodeURIComponent(calls.name)}/events`,
    statusCallbackEvents: [...(statusCallbackEvents ?? DEFAULT_STATUS_CALLBACK_EVENTS)],
  };
}
