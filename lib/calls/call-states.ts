/**
 * The states a carrier reports for a call, in the words carriers use (Twilio's CallStatus): queued,
 * ringing, in-progress, then one terminal state. A call only ever moves forward: an event whose state
 * ranks at or below the call's present one changes nothing (a late "ringing" after "completed"). The simulated carrier
 * keeps its own copy of these states (simulators/simulated-carrier/protocol.ts): the same list twice on purpose, so
 * that the product misreading its own protocol fails against a stranger.
 */
export const CARRIER_CALL_STATES = [
  'queued',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'no-answer',
  'failed',
  'canceled',
] as const;
export type CarrierCallState = (typeof CARRIER_CALL_STATES)[number];

/** The states of a call before its end. */
export const CARRIER_PROGRESS_STATES = ['queued', 'ringing', 'in-progress'] as const;
export type CarrierProgressState = (typeof CARRIER_PROGRESS_STATES)[number];

/**
 * The progress events a dial may subscribe to (TELEPHONY_STATUS_CALLBACK_EVENTS); the terminal event is
 * always sent. Not queued: the dial's own answer says it (the call records queued with the carrier's id),
 * so an event for it would be a callback, a signature check and a write for nothing.
 */
export const SUBSCRIBABLE_PROGRESS_STATES = [
  'ringing',
  'in-progress',
] as const satisfies readonly CarrierProgressState[];
export type SubscribableProgressState = (typeof SUBSCRIBABLE_PROGRESS_STATES)[number];

/**
 * By default a dial subscribes to in-progress only, as Twilio's default subscribes to the end only: the
 * answer is what the product acts on (an answered call's line, its duration); ringing is shown by the
 * carrier's lookup but nothing acts on it, and subscribing to it costs every unanswered call a second
 * callback, signature check and write (bench:carrier-ladder). A deployment that wants calls shown ringing
 * as it happens sets TELEPHONY_STATUS_CALLBACK_EVENTS=ringing,in-progress.
 */
export const DEFAULT_STATUS_CALLBACK_EVENTS: readonly SubscribableProgressState[] = ['in-progress'];

const RANK: Record<CarrierCallState, number> = {
  queued: 1,
  ringing: 2,
  'in-progress': 3,
  completed: 4,
  busy: 4,
  'no-answer': 4,
  failed: 4,
  canceled: 4,
};

export const callStateRank = (state: CarrierCallState): number => RANK[state];
export const isTerminalCallState = (state: CarrierCallState): boolean => RANK[state] === 4;
