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
 * The carrier refused the caller number when asked to dial (Twilio's 21210, "'From' phone number not verified": the
 * number is not the account's): the workspace's setup, not the lead's number, so no attempt of any lead can be placed
 * from it until an operator fixes it. The dial pauses the campaign, naming the number and the carrier's words
 * (Campaign.statusReason caller_number_refused); the lead is not charged an attempt.
 */
export class CarrierRefusedCallerError extends Error {
  constructor(
    /** The caller number refused (E.164). */
    readonly from: string,
    /** What the carrier said, its code first. */
    readonly carrierMessage: string,
  ) {
    super(`the carrier refused the caller number ${from}: ${carrierMessage}`);
    this.name = 'CarrierRefusedCallerError';
  }
}
