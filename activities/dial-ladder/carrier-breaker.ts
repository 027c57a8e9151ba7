import type { Client } from '@temporalio/client';
import { CARRIER_FAILURE_OUTCOMES } from '../../lib/calls/call-aftermath';
import type { CarrierRefusedSetupError } from '../../lib/calls/carrier';
import {
  setupRefusedReason,
  carrierBreakerTrips,
  carrierFailuresReason,
  DEFAULT_CARRIER_BREAKER,
  type CarrierBreakerRule,
} from '../../lib/dial-ladder/carrier-breaker';
import type { Database } from '../../lib/database';
import { NOW_UTC } from '../../lib/sql-clock';
import { requestCampaignPause } from '../../lib/temporal/campaigns';

export interface CarrierBreakerDependencies {
  db: Database;
  temporal: Client;
  /** The campaign carrier breaker's rule; default lib/dial-ladder/carrier-breaker.ts. */
  carrierBreaker?: CarrierBreakerRule;
}

/** The most of a refused dial's error kept (CarrierDialRefusal.error). */
const REFUSAL_ERROR_MAX_CHARS = 1_000;

/**
 * The campaign carrier breaker (docs/features/dial-ladder.md#carrier-circuit-breaker), looked at from both places a
 * call can fail at the carrier: a call that ended failed (afterCallEnded) and a dial the carrier refused (dialCall,
 * before Temporal retries it).
 */
export function createCarrierBreaker({
  db,
  temporal,
  carrierBreaker = DEFAULT_CARRIER_BREAKER,
}: CarrierBreakerDependencies) {
  /**
   * The campaign's attempts in the breaker's window, each counted once, and only those since the
   * campaign's last change (updatedAt: a resume, any transition or an edit), so that nothing from before
   * a resume counts again: its calls that ended within windowMs (a failure when failed at the carrier,
   * or when a dial of it had been refused), plus its attempts refused within windowMs whose call has not
   * ended (a failure each, however often the retries of the attempt were refused).
   */
  async function attemptsInWindow(campaignId: string) {
    const [row] = await db.$queryRawUnsafe<Array<{ status: string; calls: number; failures: number }>>(
      `WITH campaign AS (
         SELECT id, status::text AS status, "updatedAt" FROM "Campaign" WHERE id = $1::uuid
       ), refused AS (
         SELECT DISTINCT r."attemptId" FROM "CarrierDialRefusal" r, campaign c
          WHERE r."campaignId" = c.id AND r.at >= c."updatedAt"
            AND r.at >= ${NOW_UTC} - $3::int * interval '1 millisecond'
       ), attempts AS (
         SELECT k.outcome = ANY($2::text[]) OR k."attemptId" IN (SELECT "attemptId" FROM refused) AS failed
           FROM "Call" k, campaign c
          WHERE k."campaignId" = c.id AND k.status = 'ended' AND k."startedAt" >= c."updatedAt"
            AND k."endedAt" >= ${NOW_UTC} - $3::int * interval '1 millisecond'
         UNION ALL
         SELECT true FROM refused r
          WHERE NOT EXISTS (SELECT 1 FROM "Call" k WHERE k."attemptId" = r."attemptId" AND k.status = 'ended')
       )
       SELECT c.status,
              (SELECT count(*) FROM attempts)::int AS calls,
              (SELECT count(*) FROM attempts WHERE failed)::int AS failures
         FROM campaign c`,
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
    // False when no workflow controls the campaign (never started through the API), or it is paused already.
    return requestCampaignPause(
      temporal,
      campaignId,
      carrierFailuresReason(carrierBreaker, calls, failures, new Date()),
    );
  }

  return {
    /**
     * The carrier refused the workspace's setup at a dial (CarrierRefusedSetupError: the caller number, the account,
     * the destination): no lead can be called that way until an operator fixes it, so the campaign is paused at once,
     * as the breaker pauses it, with the number and the carrier's words as its reason. Not a carrier failure: the
     * breaker does not count it.
     */
    pauseForRefusedSetup: (campaignId: string, refused: CarrierRefusedSetupError): Promise<boolean> =>
      requestCampaignPause(temporal, campaignId, setupRefusedReason(refused, new Date())),

    /** Looks at the running campaign's window and pauses it if the breaker trips; answers whether it did. */
    considerCarrierBreaker: async (campaignId: string): Promise<boolean> => {
      const window = await attemptsInWindow(campaignId);
      if (window?.status !== 'RUNNING' || !carrierBreakerTrips(carrierBreaker, window.calls, window.failures))
        return false;
      return trip(campaignId, window.calls, window.failures);
    },

    /**
     * A dial of the campaign's attempt that the carrier refused (each retry of it records one more). The
     * campaign's refusals older than the window, which the breaker no longer counts, go in the same
     * statement: an outage leaves no more rows behind than one window holds.
     */
    recordDialRefusal: async (campaignId: string, attemptId: string, error: unknown): Promise<void> => {
      await db.$executeRawUnsafe(
        `WITH expired AS (
           DELETE FROM "CarrierDialRefusal"
            WHERE "campaignId" = $1::uuid AND at < ${NOW_UTC} - $4::int * interval '1 millisecond'
         )
         INSERT INTO "CarrierDialRefusal" (id, "campaignId", "attemptId", error, at)
         VALUES (gen_random_uuid(), $1::uuid, $2, $3, ${NOW_UTC})`,
        campaignId,
        attemptId,
        String(error instanceof Error ? error.message : error).slice(0, REFUSAL_ERROR_MAX_CHARS),
        carrierBreaker.windowMs,
      );
    },
  };
}
