import { z } from 'zod';
import type { CarrierRefusedSetupError } from '../calls/carrier';

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
/** The carrier refused the campaign's caller number at a dial (Twilio's 21210): docs/features/carriers/twilio.md. */
export const CALLER_NUMBER_REFUSED_REASON = 'caller_number_refused';
/** The carrier refused the account itself at a dial (Twilio's 20003, 20005, 21219). */
export const CARRIER_ACCOUNT_REFUSED_REASON = 'carrier_account_refused';
/** The carrier refused to call the lead's destination from this account (Twilio's 21215, 21216). */
export const DESTINATION_NOT_PERMITTED_REASON = 'destination_not_permitted';
/** The caller number is bound to no carrier connection and simulators are disabled (docs/configuration.md#simulators). */
export const NO_CARRIER_CONNECTION_REASON = 'no_carrier_connection';

/** Campaign.statusReason: why the service itself changed the campaign's status. */
export const campaignStatusReasonSchema = z
  .object({
    code: z
      .enum([
        CARRIER_FAILURES_REASON,
        CALLER_NUMBER_REFUSED_REASON,
        CARRIER_ACCOUNT_REFUSED_REASON,
        DESTINATION_NOT_PERMITTED_REASON,
        NO_CARRIER_CONNECTION_REASON,
      ])
      .describe(
        'carrier_failures: paused by the carrier circuit breaker. caller_number_refused: paused because the carrier ' +
          "refused the campaign's caller number at a dial (not the account's, or not verified on it). " +
          'carrier_account_refused: the carrier refused the account at a dial (its credentials, an inactive or trial ' +
          'account). destination_not_permitted: the account may not call the destination of a lead (a country not ' +
          'enabled, a blocked destination). no_carrier_connection: the caller number is bound to no carrier connection ' +
          'and simulators are disabled (SIMULATORS), so no call could be placed from it.',
      ),
    detail: z
      .string()
      .describe(
        "What happened, in words: the failures and calls counted and the rule; or the number refused, the carrier's words and what to fix.",
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

/** What each refusal of the setup says, and what the operator is to fix before resuming. */
const SETUP_REFUSALS: Record<CarrierRefusedSetupError['refusal'], (number: string, carrierMessage: string) => string> =
  {
    caller_number_refused: (from, said) =>
      `The carrier refused the caller number ${from} at a dial (${said}). Bind a number the carrier account owns or has verified to the campaign, or verify this one`,
    carrier_account_refused: (from, said) =>
      `The carrier refused the account of the caller number ${from} at a dial (${said}). Fix the account (its credentials: carrier rotate; its status or trial restrictions: at the carrier)`,
    destination_not_permitted: (to, said) =>
      `The carrier account may not call ${to} (${said}). Enable that destination for the account (Twilio: Voice Geographic Permissions), or remove the campaign's leads to it`,
    no_carrier_connection: (from, said) =>
      `No call can be placed from ${from} (${said}). Bind it to a carrier connection (number assign --carrier-connection), or give the campaign a bound caller number`,
  };

/** The reason a campaign is paused when the carrier refuses its setup (caller number, account, destination) at a dial. */
export function setupRefusedReason(refused: CarrierRefusedSetupError, at: Date): CampaignStatusReason {
  return {
    code: refused.refusal,
    detail: `${SETUP_REFUSALS[refused.refusal](refused.number, refused.carrierMessage)}, then resume: the leads keep their attempts.`,
    at: at.toISOString(),
  };
}
