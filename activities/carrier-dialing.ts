import type { CallOutcome } from '../lib/call-outcomes';
import { DEFAULT_CALL_END_DEADLINE_MS, RECHECK_AFTER_DEADLINE_MS, RECHECKS_AFTER_DEADLINE } from './call-deadline';
import type { ActivityDependencies } from './index';
import type { CarrierAgent, CarrierDialRequest } from './providers/carrier';

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
 * What placing a recorded call through the carrier takes, for a lead's attempt (activities/calls.ts) and
 * a test call (activities/test-calls.ts) alike: the dial request, the carrier's id recorded once, and the
 * deadline the waiting workflow is given.
 */
export function createCarrierDialing({
  db,
  calls,
  statusCallbackBaseUrl,
  callEndDeadlineMs = DEFAULT_CALL_END_DEADLINE_MS,
}: Pick<ActivityDependencies, 'db' | 'calls' | 'statusCallbackBaseUrl' | 'callEndDeadlineMs'>) {
  return {
    dialed: (callId: string, attemptId: string): CallOnTheLine => ({
      outcome: 'dialed',
      callId,
      attemptId,
      deadlineMs: callEndDeadlineMs,
      recheckMs: Math.min(RECHECK_AFTER_DEADLINE_MS, callEndDeadlineMs),
      rechecks: RECHECKS_AFTER_DEADLINE,
    }),
    recordProviderCallId: async (attemptId: string, providerCallId: string) => {
      await db.call.updateMany({ where: { attemptId, providerCallId: null }, data: { providerCallId } });
      return db.call.findUniqueOrThrow({ where: { attemptId }, select: { id: true, campaignId: true } });
    },
    /** What the carrier is told: the numbers, the agent and the lead for the conversation, where to report. */
    dialRequest: async (attemptId: string, to: string): Promise<CarrierDialRequest> => {
      const call = await db.call.findUniqueOrThrow({
        where: { attemptId },
        select: { fromNumber: true, agentId: true, testLead: true, lead: { select: { name: true, fields: true } } },
      });
      const agent = call.agentId ? await db.agent.findUnique({ where: { id: call.agentId } }) : null;
      return {
        attemptId,
        from: call.fromNumber,
        to,
        agent: agent && {
          id: agent.id,
          language: agent.language,
          voiceId: agent.voiceId,
          script: agent.script as unknown as CarrierAgent['script'],
          extractionFields: agent.extractionFields as unknown as CarrierAgent['extractionFields'],
        },
        lead: leadOfCall(call),
        statusCallbackUrl: `${statusCallbackBaseUrl}/telephony/${encodeURIComponent(calls.name)}/events`,
      };
    },
  };
}
