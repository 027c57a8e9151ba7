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
import { attemptsInBreakerWindow, insertDialRefusal } from '../../lib/dial-ladder/dial-ladder-store';
import type { Database } from '../../lib/database';
import { prismaSql } from '../../lib/run-sql';
import { requestCampaignPause } from '../../lib/temporal/campaigns';

/*
 * The campaign carrier breaker (docs/features/dial-ladder.md#carrier-circuit-breaker), looked at from both places a
 * call can fail at the carrier: a call that ended failed (afterCallEnded) and a dial the carrier refused (dialCall,
 * before Temporal retries it).
 */

export interface CarrierBreakerDependencies {
  db: Database;
  temporal: Client;
  /** The campaign carrier breaker's rule; default lib/dial-ladder/carrier-breaker.ts. */
  carrierBreaker?: CarrierBreakerRule;
}

/** The most of a refused dial's error kept (CarrierDialRefusal.error). */
const REFUSAL_ERROR_MAX_CHARS = 1_000;

/**
 * The carrier refused the workspace's setup at a dial (CarrierRefusedSetupError: the caller number, the account,
 * the destination): no lead can be called that way until an operator fixes it, so the campaign is paused at once,
 * as the breaker pauses it, with the number and the carrier's words as its reason. Not a carrier failure: the
 * breaker does not count it.
 */
export function pauseForRefusedSetup(
  { temporal }: Pick<CarrierBreakerDependencies, 'temporal'>,
  campaignId: string,
  refused: CarrierRefusedSetupError,
): Promise<boolean> {
  return requestCampaignPause(temporal, campaignId, setupRefusedReason(refused, new Date()));
}

/**
 * Looks at the running campaign's window and pauses it if the breaker trips; answers whether it did. The pause goes
 * through the campaign's workflow, as an operator's pause does (the leads then hold), with the breaker's reason. Two
 * calls tripping it at once pause it once: the workflow runs transitions one at a time, and the second pause of a
 * paused campaign is refused, which is fine here. Waits only until the workflow has accepted the pause (durable from
 * then on), not for its commit: the commit is an activity, and activities of many failing calls each waiting for it
 * could otherwise take every activity slot of the worker it needs.
 */
export async function considerCarrierBreaker(
  { db, temporal, carrierBreaker = DEFAULT_CARRIER_BREAKER }: CarrierBreakerDependencies,
  campaignId: string,
): Promise<boolean> {
  const window = await attemptsInBreakerWindow(
    prismaSql(db),
    campaignId,
    CARRIER_FAILURE_OUTCOMES,
    carrierBreaker.windowMs,
  );
  if (window?.status !== 'RUNNING' || !carrierBreakerTrips(carrierBreaker, window.calls, window.failures)) return false;
  // False when no workflow controls the campaign (never started through the API), or it is paused already.
  return requestCampaignPause(
    temporal,
    campaignId,
    carrierFailuresReason(carrierBreaker, window.calls, window.failures, new Date()),
  );
}

/**
 * A dial of the campaign's attempt that the carrier refused (each retry of it records one more); the refusals the
 * breaker's window no longer holds go with it (lib/dial-ladder/dial-ladder-store.ts insertDialRefusal).
 */
export async function recordDialRefusal(
  { db, carrierBreaker = DEFAULT_CARRIER_BREAKER }: Pick<CarrierBreakerDependencies, 'db' | 'carrierBreaker'>,
  campaignId: string,
  attemptId: string,
  error: unknown,
): Promise<void> {
  await insertDialRefusal(db, {
    campaignId,
    attemptId,
    error: String(error instanceof Error ? error.message : error).slice(0, REFUSAL_ERROR_MAX_CHARS),
    windowMs: carrierBreaker.windowMs,
  });
}
