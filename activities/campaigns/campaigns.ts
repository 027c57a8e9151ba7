import { ApplicationFailure } from '@temporalio/common';
import { lockLiveAgent } from '../../lib/agents/agent-lock';
import type { CampaignStatus } from '../../lib/campaigns/campaign-transitions';
import type { CampaignStatusReason } from '../../lib/dial-ladder/carrier-breaker';
import { Prisma } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { signalCampaignChanged } from '../../lib/temporal/campaigns';
import type { ActivityDependencies } from '../dependencies';
import { hangUpCampaignCalls } from '../calls/call-hangup';

export function createCampaignActivities({ db, temporal, calls }: ActivityDependencies) {
  return {
    /**
     * Commits the campaign's new status. A stop also ends, in the database, every lead still in
     * progress: their workflows end when woken, and whatever they were waiting for is cancelled; and it
     * hangs up the campaign's calls in progress.
     */
    async setCampaignStatus({
      campaignId,
      status,
      statusReason,
    }: {
      campaignId: string;
      status: CampaignStatus;
      /** The service's own reason (the carrier breaker); none from an operator or a key, which clears it. */
      statusReason?: CampaignStatusReason;
    }): Promise<void> {
      await db.$transaction(async (tx) => {
        // updatedAt moves too: the carrier breaker's window starts again here (lib/dial-ladder/dial-ladder/carrier-breaker.ts).
        const campaign = await tx.campaign.update({
          where: { id: campaignId },
          data: { status, statusReason: statusReason ?? Prisma.DbNull },
        });
        // Starting or resuming holds the campaign's agent against deletion (DELETE /agents/{id} refuses while a
        // RUNNING campaign uses it); an agent deleted meanwhile refuses the transition, and nothing changes.
        if (
          status === 'RUNNING' &&
          campaign.agentId &&
          !(await lockLiveAgent(tx, campaign.workspaceId, campaign.agentId))
        )
          throw ApplicationFailure.create({
            type: ErrorCode.agent_deleted,
            message: `the campaign's agent ${campaign.agentId} was deleted`,
            nonRetryable: true,
          });
        if (status === 'STOPPED') {
          await tx.lead.updateMany({
            where: { campaignId, status: { in: ['queued', 'dialing'] } },
            data: { status: 'cancelled' },
          });
        }
      });
      // Its calls in progress are hung up; their canceled events end them and give their lines back.
      if (status === 'STOPPED') await hangUpCampaignCalls(db, calls, campaignId);
    },

    /** Wakes every running lead workflow of the campaign (waiting on it, or between rungs); returns how many were signalled. */
    async notifyCampaignLeads({ campaignId }: { campaignId: string }): Promise<number> {
      return signalCampaignChanged(temporal, campaignId);
    },
  };
}
