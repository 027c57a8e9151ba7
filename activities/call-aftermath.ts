import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateStage, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  CARRIER_FAILURE_OUTCOMES,
  carrierBreakerTrips,
  carrierFailuresReason,
  DEFAULT_CARRIER_BREAKER,
  type CarrierBreakerRule,
} from '../lib/campaigns/carrier-breaker';
import { startCallIntelligence } from '../lib/calls/start-call-intelligence';
import type { Database } from '../lib/database';
import { ErrorCode } from '../lib/error-codes';
import { campaignWorkflowId } from '../lib/workflow-ids';
import { campaignTransitionUpdate } from '../workflows/messages';

export interface CallAftermathDependencies {
  db: Database;
  temporal: Client;
  /** The campaign carrier breaker's rule; default lib/campaigns/carrier-breaker.ts. */
  carrierBreaker?: CarrierBreakerRule;
}

/** Outcomes of a call that was picked up, by a person or a machine: the carrier has a transcript of it. */
const CONVERSATION_OUTCOMES = ['answered', 'voicemail'];

/** Now, as the UTC wall-clock time the call columns (timestamp without time zone) hold. */
const NOW_UTC = `(now() AT TIME ZONE 'UTC')`;

/**
 * What follows the end of a call, run by the workflow that waited for it (so whichever way the call
 * ended, by its terminal event or by reconciliation, and retried by Temporal until done): its call
 * intelligence is started, and its campaign's carrier breaker is looked at.
 */
export function createCallAftermathActivities({
  db,
  temporal,
  carrierBreaker = DEFAULT_CARRIER_BREAKER,
}: CallAftermathDependencies) {
  /**
   * The campaign's calls in the breaker's window: ended within windowMs, and started since the
   * campaign's last change (updatedAt: a resume, any transition or an edit), so that calls from before
   * a resume never count again.
   */
  async function callsInWindow(campaignId: string) {
    const [row] = await db.$queryRawUnsafe<Array<{ status: string; calls: number; failures: number }>>(
      `SELECT c.status::text AS status,
              count(k.id)::int AS calls,
              count(k.id) FILTER (WHERE k.outcome = ANY($2::text[]))::int AS failures
         FROM "Campaign" c
         LEFT JOIN "Call" k ON k."campaignId" = c.id AND k.status = 'ended'
                           AND k."endedAt" >= ${NOW_UTC} - $3::int * interval '1 millisecond'
                           AND k."startedAt" >= c."updatedAt"
        WHERE c.id = $1::uuid
        GROUP BY c.id`,
      campaignId,
      CARRIER_FAILURE_OUTCOMES,
      carrierBreaker.windowMs,
    );
    return row;
  }

  /**
   * Pauses the campaign through its workflow, as an operator's pause does (the leads then hold), with
   * the breaker's reason. Two calls tripping it at once pause it once: the workflow runs transitions
   * one at a time, and the second pause of a paused campaign is refused, which is fine here. Waits
   * only until the workflow has accepted the pause (durable from then on), not for its commit: the
   * commit is an activity, and activities of many failing calls each waiting for it could otherwise
   * take every activity slot of the worker it needs.
   */
  async function trip(campaignId: string, calls: number, failures: number): Promise<boolean> {
    try {
      await temporal.workflow.getHandle(campaignWorkflowId(campaignId)).startUpdate(campaignTransitionUpdate, {
        args: ['pause', carrierFailuresReason(carrierBreaker, calls, failures, new Date())],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      return true;
    } catch (error) {
      // Not controlled by a workflow (never started through the API): nothing to pause.
      if (error instanceof WorkflowNotFoundError) return false;
      const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === ErrorCode.invalid_campaign_transition) return false;
      throw error;
    }
  }

  return {
    /**
     * After a call ended: an answered or voicemail call gets its call intelligence (started once per
     * call: a second start is refused by its workflow id, harmlessly); a call of a running campaign
     * makes its carrier breaker look at the window, and pause the campaign if it trips. Answers what it did.
     */
    async afterCallEnded({
      callId,
    }: {
      callId: string;
    }): Promise<{ intelligenceStarted: boolean; breakerTripped: boolean }> {
      const call = await db.call.findUniqueOrThrow({
        where: { id: callId },
        select: { id: true, outcome: true, campaignId: true },
      });
      const intelligenceStarted = CONVERSATION_OUTCOMES.includes(call.outcome ?? '');
      if (intelligenceStarted) await startCallIntelligence(temporal, Context.current().info.taskQueue, call.id);
      let breakerTripped = false;
      if (call.campaignId && CARRIER_FAILURE_OUTCOMES.includes(call.outcome as never)) {
        const window = await callsInWindow(call.campaignId);
        if (window?.status === 'RUNNING' && carrierBreakerTrips(carrierBreaker, window.calls, window.failures))
          breakerTripped = await trip(call.campaignId, window.calls, window.failures);
      }
      return { intelligenceStarted, breakerTripped };
    },
  };
}
