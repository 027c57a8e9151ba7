import type { Transcript } from './transcript';
import type { CarrierCallState, CarrierProgressState } from './call-states';

/**
 * A telephony carrier, shaped like the real ones (Twilio, Telnyx, Vonage, Plivo): a dial request is
 * answered at once with the carrier's call id, and the call's progress arrives later as signed HTTP
 * callbacks at statusCallbackUrl (POST /telephony/{provider}/events). lookup answers what the carrier
 * knows now, for reconciliation when callbacks stop coming.
 */
export interface Carrier {
  /** The {provider} of the event endpoint, and what every call records: a simulated call never passes for a real one. */
  readonly name: string;
  /** Places the call. The attempt id is the idempotency key: a second dial of one attempt returns the first call. */
  dial(request: CarrierDialRequest): Promise<{ providerCallId: string }>;
  /** The call's present state by the carrier's id or by attempt id; null when the carrier never placed it. */
  lookup(reference: { providerCallId: string } | { attemptId: string }): Promise<CarrierCallSnapshot | null>;
  /** Ends a call in progress (a stopped campaign); a call already ended is left as it is. */
  hangup(providerCallId: string): Promise<void>;
  /** The transcript of an answered call once it has ended; null when there is none (not answered, or not yet). */
  transcript(providerCallId: string): Promise<Transcript | null>;
}

export interface CarrierDialRequest {
  attemptId: string;
  /** E.164 caller number (a voice number of the workspace), or null for the carrier's default. */
  from: string | null;
  /** E.164 number to call. */
  to: string;
  /**
   * The carrier connection of the caller number the call was recorded on (docs/features/carriers.md), which the
   * call is placed through; null or absent: the carrier's own (the simulated carrier).
   */
  carrierConnectionId?: string | null;
  /** What the AI agent on the call says and fills (null: the campaign names no agent). */
  agent: CarrierAgent | null;
  /** The lead's name and fields, for the agent's conversation. */
  lead: { name: string | null; fields: Record<string, unknown> };
  /** Where the carrier POSTs the call's status events. */
  statusCallbackUrl: string;
  /**
   * The progress states to be told of besides the terminal one, which is always sent (Twilio's
   * StatusCallbackEvent); absent: every state.
   */
  statusCallbackEvents?: CarrierProgressState[];
  /**
   * The longest the call may talk, counted from its answer, after which the carrier ends it (Twilio's timeLimit,
   * Telnyx's time_limit_secs, the simulated carrier's hangup): a test call's is the minutes its credit hold covers
   * (lib/credits/test-call-billing.ts testCallTimeLimitMs). Absent: the longest call (MAX_CALL_LENGTH_MS).
   */
  timeLimitMs?: number;
}

export interface CarrierAgent {
  id: string;
  language: string;
  voiceId: string;
  script: { openingLine: string; questions: string[]; closing: string };
  extractionFields: Array<{ name: string; type: string; description: string; allowedValues?: string[] }>;
}

export interface CarrierCallSnapshot {
  providerCallId: string;
  attemptId: string;
  status: CarrierCallState;
  /** human or machine once answered (answering-machine detection); null before, or when unknown. */
  answeredBy: 'human' | 'machine' | null;
  /** Talk time of an ended call. */
  durationMs: number | null;
  /** Why a failed call failed (invalid_number: the number does not exist), when the carrier says. */
  reason?: string | null;
}

/**
 * The carrier refused the number itself when asked to dial it (Twilio's 21211, "Invalid 'To' Phone Number"): no call
 * was placed and none will be, so the attempt ends invalid_number at once, as a carrier's failed call with reason
 * invalid_number would, instead of being retried as a carrier that did not answer.
 */
export class CarrierRefusedNumberError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CarrierRefusedNumberError';
  }
}

/**
 * What the carrier refused of the workspace's setup rather than of the lead (docs/features/carriers/twilio.md#refusals-at-the-dial):
 * - caller_number_refused: the caller number (Twilio's 21210 "'From' phone number not verified", 21212);
 * - carrier_account_refused: the account itself (its credentials refused, 20003; not active, 20005; a trial account
 *   that may call only verified numbers, 21219);
 * - destination_not_permitted: the account may not call the lead's destination (21215, the country's Geo Permissions
 *   not enabled; 21216, blocked by Twilio), which every lead to it would meet;
 * - no_carrier_connection: not a carrier's word but the product's: the caller number is bound to no carrier connection
 *   and SIMULATORS is disabled, so nothing would place the call (lib/carriers/unbound-carrier.ts).
 */
export type CarrierSetupRefusal =
  'caller_number_refused' | 'carrier_account_refused' | 'destination_not_permitted' | 'no_carrier_connection';

/**
 * The carrier refused the workspace's setup when asked to dial (CarrierSetupRefusal): not the lead's number, so the lead
 * must not pay for it, and every lead would meet it until an operator fixes it. The dial pauses the campaign, naming
 * the number and the carrier's words (Campaign.statusReason with the refusal as its code); the lead is not charged an
 * attempt.
 */
export class CarrierRefusedSetupError extends Error {
  constructor(
    readonly refusal: CarrierSetupRefusal,
    /** The number the refusal is about (E.164): the caller number, or the lead's for a destination not permitted. */
    readonly number: string,
    /** What the carrier said, its code first. */
    readonly carrierMessage: string,
  ) {
    super(`the carrier refused the dial (${refusal}, ${number}): ${carrierMessage}`);
    this.name = 'CarrierRefusedSetupError';
  }
}
