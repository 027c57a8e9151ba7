import type { CampaignStatus } from './campaign-transitions';

/*
 * What campaignWorkflow (workflows/campaigns/campaign.ts), a campaign's control, is started with; it answers the
 * campaign's status (CampaignStatus). Types only, so that whoever starts it (lib/temporal/) loads no workflow code.
 */

export interface CampaignWorkflowInput {
  campaignId: string;
  status: CampaignStatus;
  /** History events before continuing as new; the default suits production, tests lower it. */
  historyLimit?: number;
}
