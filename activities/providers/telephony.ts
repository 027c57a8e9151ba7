import type { CallOutcome } from '../../lib/call-outcomes';

/** Places outbound calls and reports how they ended. Real carriers plug in behind this interface. */
export interface Telephony {
  /** Recorded with every call, so a simulated call can never pass for a real one. */
  readonly name: string;
  /** Places the call for one attempt. The attempt id is the idempotency key: never two calls for one id. */
  dial(request: DialRequest): Promise<DialResult>;
  /** What happened to an attempt: its result, or null when the provider never placed it. */
  lookup(attemptId: string): Promise<DialResult | null>;
}

export interface DialRequest {
  attemptId: string;
  /** E.164 number to call. */
  to: string;
}

export interface DialResult {
  providerCallId: string;
  outcome: CallOutcome;
  durationMs: number;
}
