import type { CallOutcome } from '../calls/call-outcomes';

/** What an attempt's outcome does to the ladder: end it, or move to the next rung after its delay. */
export type LadderRule = 'end' | 'next';

/** A dial ladder as its rules read it (lib/dial-ladder/dial-ladder.ts DialLadder, which zod checks). */
interface RuledLadder {
  rungs: readonly { delaySeconds: number }[];
  outcomes: Record<Exclude<CallOutcome, OptionalOutcome>, LadderRule> & Partial<Record<OptionalOutcome, LadderRule>>;
}

/** Outcomes a ladder may leave out: voicemail_left (it follows voicemail) and the conversation tools' outcomes. */
export const OPTIONAL_OUTCOMES = [
  'voicemail_left',
  'opted_out',
  'callback_requested',
  'transferred',
  'appointment_booked',
] as const;
type OptionalOutcome = (typeof OPTIONAL_OUTCOMES)[number];

/*
 * The ladder's rules as the lead workflows read them: pure, no zod (this module is shared by every workflow run of a
 * worker, worker/shared-workflow-modules.ts, which deep-freezes what it exports).
 */

/**
 * The ladder as the lead workflow reads it (activities/dial-ladder/calls.ts): voicemail_left, which ladders made
 * before it existed (and bodies that leave it out) do not give, follows the ladder's voicemail rule.
 */
export const withEveryOutcomeRule = <Ladder extends RuledLadder>(
  ladder: Ladder,
): Ladder & { outcomes: Record<CallOutcome, LadderRule> } => ({
  ...ladder,
  outcomes: {
    ...ladder.outcomes,
    voicemail_left: ladder.outcomes.voicemail_left ?? ladder.outcomes.voicemail,
    opted_out: 'end',
    callback_requested: ladder.outcomes.callback_requested ?? 'next',
    transferred: ladder.outcomes.transferred ?? 'end',
    // A lead with a booked appointment is finished: never redialed (docs/features/calendar.md#the-outcome).
    appointment_booked: 'end',
  },
});

/**
 * What the ladder does after attempt `attempt` (1-based) ended with `outcome`: over, or the next attempt after
 * delayMs. A callback the lead asked for (callback_requested with its time, callbackAt) is the next attempt at that time
 * instead of the next rung's delay, and is honoured once past the last rung (docs/features/conversation/tools.md).
 * Workflow-safe: no I/O; `nowMs` is the workflow's clock. Ladders recorded before the tools' outcomes existed get their
 * rules from withEveryOutcomeRule, and never saw these outcomes.
 */
export function afterAttempt(
  ladder: RuledLadder,
  attempt: number,
  outcome: CallOutcome,
  callbackAt: string | null | undefined,
  nowMs: number,
): { over: boolean; delayMs: number } {
  const rule = withEveryOutcomeRule(ladder).outcomes[outcome];
  const nextRung = ladder.rungs[attempt];
  if (outcome === 'callback_requested' && rule === 'next' && callbackAt)
    return { over: attempt > ladder.rungs.length, delayMs: Math.max(0, Date.parse(callbackAt) - nowMs) };
  return { over: rule === 'end' || nextRung === undefined, delayMs: nextRung ? nextRung.delaySeconds * 1000 : 0 };
}
