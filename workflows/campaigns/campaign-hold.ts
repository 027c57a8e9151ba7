import { condition, setHandler } from '@temporalio/workflow';
import { campaignChangedSignal } from '../../lib/temporal/messages';

/** What a lead's workflow answers its state query with while it waits: the phase, and when it wakes by itself. */
interface WaitingState<Phase extends string> {
  phase: Phase;
  nextWakeAt: string | null;
}

/** How a lead's workflow holds while its campaign is held, and waits without outliving a stop. */
export interface CampaignHold<Phase extends string> {
  /** Whether campaignChanged came since the last forgetChanges(). */
  readonly changed: boolean;
  /** From now on only a later campaignChanged counts. */
  forgetChanges(): void;
  /**
   * Holds the lead (in phase, with no wake-up of its own to show) until campaignChanged came since the last
   * forgetChanges(), orWhen() holds, or recheckMs passes, should a signal have been missed.
   */
  hold(phase: Phase, recheckMs: number, orWhen?: () => boolean): Promise<void>;
  /**
   * Waits ms (in phase, showing when it wakes), woken early by each campaignChanged to ask the campaign's status;
   * false when the campaign was stopped meanwhile. Cut short, without asking, once orWhen() holds (the lead's number
   * opted out: the caller reads it).
   */
  waitUnlessStopped(phase: Phase, ms: number, orWhen?: () => boolean): Promise<boolean>;
}

/**
 * A lead's campaign as the lead's workflow follows it: campaignChanged (its campaign started, paused, resumed or
 * stopped: lib/temporal/campaigns.ts signalCampaignChanged) received from the call on, the hold while the campaign
 * does not run, and the waits a stop cuts short. Shared by the dial ladders (workflows/dial-ladder/) and the
 * WHATSAPP lead (workflows/whatsapp/lead-message.ts): the commands it gives (a timer per wait, the status asked
 * after each signal) are those each of them gave with its own copy, so their histories replay unchanged.
 * Call it where the workflow registers its handlers; campaignStatus asks the lead's campaign's status
 * (campaignStatusOfLead, as the workflow proxies it).
 */
export function receiveCampaignChanges<Phase extends string>(
  state: WaitingState<Phase>,
  campaignStatus: () => Promise<string>,
): CampaignHold<Phase> {
  let changed = false;
  setHandler(campaignChangedSignal, () => {
    changed = true;
  });
  return {
    get changed() {
      return changed;
    },
    forgetChanges() {
      changed = false;
    },
    async hold(phase, recheckMs, orWhen = () => false) {
      Object.assign(state, { phase, nextWakeAt: null });
      await condition(() => changed || orWhen(), recheckMs);
    },
    async waitUnlessStopped(phase, ms, orWhen = () => false) {
      const wakeAt = Date.now() + ms;
      Object.assign(state, { phase, nextWakeAt: new Date(wakeAt).toISOString() });
      while (Date.now() < wakeAt && !orWhen()) {
        changed = false;
        if (!(await condition(() => changed || orWhen(), wakeAt - Date.now()))) break;
        if (orWhen()) break;
        if ((await campaignStatus()) === 'STOPPED') return false;
      }
      state.nextWakeAt = null;
      return true;
    },
  };
}
