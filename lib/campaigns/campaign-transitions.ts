/** Campaign control (spec section 3 names the operations; the transitions are this service's). */
export const CAMPAIGN_ACTIONS = ['start', 'pause', 'resume', 'stop'] as const;
export type CampaignAction = (typeof CAMPAIGN_ACTIONS)[number];
export type CampaignStatus = 'DRAFT' | 'RUNNING' | 'PAUSED' | 'STOPPED';

/**
 * start: DRAFT -> RUNNING; pause: RUNNING -> PAUSED; resume: PAUSED -> RUNNING;
 * stop: DRAFT, RUNNING or PAUSED -> STOPPED (final). Anything else is refused.
 */
const TRANSITIONS: Record<CampaignAction, Partial<Record<CampaignStatus, CampaignStatus>>> = {
  start: { DRAFT: 'RUNNING' },
  pause: { RUNNING: 'PAUSED' },
  resume: { PAUSED: 'RUNNING' },
  stop: { DRAFT: 'STOPPED', RUNNING: 'STOPPED', PAUSED: 'STOPPED' },
};

export function transitionTarget(from: CampaignStatus, action: CampaignAction): CampaignStatus | null {
  return TRANSITIONS[action][from] ?? null;
}
