import { z } from 'zod';

/**
 * The carrier circuit breaker of a campaign (docs/features/dial-ladder.md#carrier-circuit-breaker): when enough of
 * its recent calls fail at the carrier, the campaign pauses itself, so a carrier outage does not burn through its
 * calling list.
 */
export interface CarrierBreakerRule {
  /** Calls counted: those that ended within this long before now. */
  windowMs: number;
  /** Fewer calls than this in the window never trip it (a few failures are not an outage). */
  minAttempts: number;
  /** Trips when failures / calls in the window is at least this (0 to 1). */
  failureRate: number;
}

/** At least 10 calls ended in the last 5 minutes, and at least half of them failed at the carrier. */
export const DEFAULT_CARRIER_BREAKER: CarrierBreakerRule = Object.freeze({
  windowMs: 5 * 60_000,
  minAttempts: 10,
  failureRate: 0.5,
});

export const CARRIER_FAILURES_REASON = 'carrier_failures';
/** The carrier refused the campaign's caller number at a dial (Twilio's 21210): docs/features/carriers.md#twilio. */
export const CALLER_NUMBER_REFUSED_REASON = 'caller_number_refused';

/** Campaign.statusReason: why the service itself changed the campaign's status. */
export const campaignStatusReasonSchema = z
  .object({
    code: z
      .enum([CARRIER_FAILURES_REASON, CALLER_NUMBER_REFUSED_REASON])
      .describe(
        'carrier_failures: paused by the carrier circuit breaker. caller_number_refused: paused because the carrier ' +
          "refused the campaign's caller number at a dial (not the account's, or not verified on it).",
      ),
    detail: z
      .string()
      .describe(
        "What happened, in words: the failures and calls counted and the rule; or the number refused and the carrier's words.",
      ),
    at: z.string().describe('When (ISO 8601).'),
  })
  .describe(
    'Why the service itself changed the status (the carrier circuit breaker, or a refused caller number, pausing the campaign); null after any transition by an operator or a key (a resume clears it).',
  );
export type CampaignStatusReason = z.infer<typeof campaignStatusReasonSchema>;

export function carrierBreakerTrips(rule: CarrierBreakerRule, calls: number, failures: number): boolean {
  return calls >= rule.minAttempts && failures / calls >= rule.failureRate;
}

export function carrierFailuresReason(
  rule: CarrierBreakerRule,
  calls: number,
  failures: number,
  at: Date,
): CampaignStatusReason {
  return {
    code: CARRIER_FAILURES_REASON,
    detail: `${failures} of the ${calls} calls that ended in the last ${rule.windowMs / 60_000} minutes failed at the carrier (the breaker trips at ${Math.round(rule.failureRate * 100)}% of at least ${rule.minAttempts} calls)`,
    at: at.toISOString(),
  };
}

/** The reason a campaign is paused when the carrier refuses its caller number at a dial. */
export function callerNumberRefusedReason(from: string, carrierMessage: string, at: Date): CampaignStatusReason {
  return {
    code: CALLER_NUMBER_REFUSED_REASON,
    detail: `The carrier refused the caller number ${from} at a dial (${carrierMessage}). Bind a number the carrier account owns or has verified to the campaign, or verify this one, then resume: the leads keep their attempts.`,
    at: at.toISOString(),
  };
}
