import { defineQuery, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallOutcome } from '../lib/call-outcomes';
import { ErrorCode } from '../lib/error-codes';

const { prepareLead, nextCallingSlot, placeCall, finishLead } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 20,
    nonRetryableErrorTypes: [ErrorCode.lead_not_found],
  },
});

export interface LeadDialInput {
  leadId: string;
}

export interface LeadDialResult {
  status: 'completed' | 'failed' | 'cancelled';
  /** The last attempt's outcome; do_not_call when the number was on the list; null when never dialed. */
  outcome: CallOutcome | 'do_not_call' | null;
  attempts: number;
}

export type LeadPhase = 'preparing' | 'waiting_for_rung' | 'waiting_for_window' | 'dialing' | 'finished';

export interface LeadState {
  phase: LeadPhase;
  /** The attempt being made or waited for (1-based). */
  attempt: number;
  lastOutcome: CallOutcome | 'do_not_call' | null;
  /** When a waiting lead wakes up (ISO 8601). */
  nextWakeAt: string | null;
}

export const leadStateQuery = defineQuery<LeadState>('leadState');

/**
 * One lead on the CLASSIC dial ladder: each rung waits its delay, then for the calling window in the
 * lead's local time (durable timers), then places one call; the outcome's rule ends the ladder or
 * moves on. The ladder and window are the campaign's when the lead starts.
 */
export async function leadDialWorkflow({ leadId }: LeadDialInput): Promise<LeadDialResult> {
  const state: LeadState = { phase: 'preparing', attempt: 0, lastOutcome: null, nextWakeAt: null };
  setHandler(leadStateQuery, () => state);
  const wait = async (phase: LeadPhase, ms: number) => {
    Object.assign(state, { phase, nextWakeAt: new Date(Date.now() + ms).toISOString() });
    await sleep(ms);
    state.nextWakeAt = null;
  };
  const finish = async (status: LeadDialResult['status']): Promise<LeadDialResult> => {
    await finishLead({ leadId, status });
    state.phase = 'finished';
    return { status, outcome: state.lastOutcome, attempts: state.attempt };
  };

  const plan = await prepareLead({ leadId });
  for (const [index, rung] of plan.ladder.rungs.entries()) {
    state.attempt = index + 1;
    if (index > 0 && rung.delaySeconds > 0) await wait('waiting_for_rung', rung.delaySeconds * 1000);
    for (;;) {
      const slot = await nextCallingSlot(plan);
      // The window never opens in every one of the lead's zones at once: it cannot be called.
      if (slot === null) return finish('failed');
      if (slot.waitMs === 0) break;
      await wait('waiting_for_window', slot.waitMs);
    }
    state.phase = 'dialing';
    const call = await placeCall({ leadId, attempt: state.attempt });
    state.lastOutcome = call.outcome;
    if (call.outcome === 'do_not_call') return finish('cancelled');
    if (plan.ladder.outcomes[call.outcome] === 'end') break;
  }
  return finish(state.lastOutcome === 'answered' ? 'completed' : 'failed');
}
