import type { CallOutcome } from './call-outcomes';

/**
 * An inbound call watched until it ends (workflows/calls/inbound-call.ts, docs/features/carriers/inbound.md#a-lost-end):
 * by its attempt id, which the call's carrier events name.
 */
export interface InboundCallInput {
  attemptId: string;
}

/** How the inbound call ended: by its carrier's event, or by asking the carrier past the deadline. */
export interface InboundCallResult {
  callId: string;
  outcome: CallOutcome;
  durationMs: number | null;
}
