/**
 * How long a lead waits, as durable state, for the terminal event of the call it placed
 * (docs/features/calls.md#telephony-the-carrier-path, "Deadline and reconciliation"). Real durations, scaled by
 * nothing: a carrier gives up ringing after its ring timeout, and a call ends by the agent's maximum length at the
 * latest; the margin covers events in flight and the carrier's retries. Past the deadline the lead asks the carrier
 * (lookup); while the carrier says the call is still on, it looks again every RECHECK, at most RECHECKS times.
 */
export const RING_TIMEOUT_MS = 60_000;
/** Agents carry no length limit of their own yet: every call is held to this. */
export const MAX_CALL_LENGTH_MS = 30 * 60_000;
export const DEADLINE_MARGIN_MS = 60_000;
export const DEFAULT_CALL_END_DEADLINE_MS = RING_TIMEOUT_MS + MAX_CALL_LENGTH_MS + DEADLINE_MARGIN_MS;
/** After the deadline, a call the carrier still reports as ringing or talking is looked up again this often... */
export const RECHECK_AFTER_DEADLINE_MS = DEADLINE_MARGIN_MS;
/** ...this many times, then hung up and ended failed (lost). */
export const RECHECKS_AFTER_DEADLINE = 3;
