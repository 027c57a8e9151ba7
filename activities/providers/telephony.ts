/** Places one outbound call and reports how it ended. Real carriers plug in behind this interface. */
export interface Telephony {
  /** Recorded with every call, so a simulated call can never pass for a real one. */
  readonly name: string;
  dial(request: DialRequest): Promise<DialResult>;
}

export interface DialRequest {
  /** E.164 number to call. */
  to: string;
  /** Lets a provider refuse a second dial for the same attempt. */
  idempotencyKey: string;
}

export const CALL_OUTCOMES = ['answered', 'busy', 'no_answer', 'voicemail', 'failed', 'invalid_number'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export interface DialResult {
  providerCallId: string;
  outcome: CallOutcome;
  durationMs: number;
}
