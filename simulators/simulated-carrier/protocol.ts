import { createHmac } from 'node:crypto';
import { z } from 'zod';

/*
 * The simulated carrier's protocol in its own words, written from its page (docs/features/calls.md, "Telephony: the
 * carrier path" and "The simulated carrier"): the dial it accepts, the call it answers, the status events it POSTs
 * and how it signs them. The product keeps the same protocol on its side (lib/calls/carrier.ts, call-event.ts,
 * call-states.ts, signature.ts), and the two hold the same constants ON PURPOSE: the carrier is a stranger that
 * reads the page, not the product's code, so a product that misreads its own protocol (a state's name, a field, the
 * signed bytes) fails its tests against this server instead of both sides agreeing on the mistake
 * (docs/providers.md#twins-are-strangers-to-the-product). Change the page and both sides, never one.
 */

/** The states it reports, in the words carriers use (Twilio's CallStatus): three of progress, then one terminal. */
export const CALL_STATES = [
  'queued',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'no-answer',
  'failed',
  'canceled',
] as const;
export type CallState = (typeof CALL_STATES)[number];

/** The states of a call before its end: what a dial may subscribe to (its terminal event is always sent). */
export const PROGRESS_STATES = ['queued', 'ringing', 'in-progress'] as const;

export const isTerminalCallState = (state: CallState): boolean =>
  !(PROGRESS_STATES as readonly CallState[]).includes(state);

/**
 * POST /calls. The agent and the lead are kept as sent, for the conversation (conversation.ts); what else a dial
 * carries (a carrier connection, a time limit) is not this carrier's business and is dropped.
 */
export const dialSchema = z.object({
  attemptId: z.string().min(1).max(300),
  from: z.string().max(40).nullable().optional(),
  to: z.string().min(1).max(40),
  agent: z.unknown().optional(),
  lead: z.unknown().optional(),
  statusCallbackUrl: z.string().url(),
  statusCallbackEvents: z.array(z.enum(PROGRESS_STATES)).optional(),
});
export type Dial = z.infer<typeof dialSchema>;

/** What it answers of a call (a dial, a lookup, a hangup): what it knows of the call now. */
export interface CallSnapshot {
  providerCallId: string;
  attemptId: string;
  status: CallState;
  answeredBy: 'human' | 'machine' | null;
  /** Talk time of an ended call; null before its end. */
  durationMs: number | null;
  /** Why a failed call failed (invalid_number, carrier_error) or a canceled one ended (hangup). */
  reason: string | null;
}

/**
 * One status event, POSTed to the dial's statusCallbackUrl (the product's /telephony/{provider}/events): the call as it
 * was when it reached the event's state, with the event's id and time.
 */
export interface CallEvent extends CallSnapshot {
  /** `<providerCallId>:<status>`: the same on every delivery of one event. */
  eventId: string;
  /** ISO 8601: when the call reached the state. */
  occurredAt: string;
}

/** A turn of GET /calls/{id}/transcript: who spoke, what, and when from the answer (a type: it is stored as JSON). */
export type TranscriptTurn = { speaker: 'agent' | 'lead'; text: string; offsetMs: number };

/**
 * The event's signature, Stripe's and Standard Webhooks' scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>">` with the carrier's signing secret, in this header.
 */
export const SIGNATURE_HEADER = 'telephony-signature';

export function signEvent(secret: string, rawBody: string, nowMs = Date.now()): string {
  const seconds = Math.floor(nowMs / 1000);
  const hmac = createHmac('sha256', secret).update(`${seconds}.${rawBody}`).digest('hex');
  return `t=${seconds},v1=${hmac}`;
}
