import type { CampaignStatus } from '../lib/campaign-transitions';
import { campaignChangedSignal } from '../workflows/messages';
import type { ActivityDependencies } from './index';

export function createCampaignActivities({ db, temporal }: ActivityDependencies) {
  return {
    /**
     * Commits the campaign's new status. A stop also ends, in the database, every lead still in
     * progress: their workflows end when woken, and whatever they were waiting for is cancelled.
     */
    async setCampaignStatus({ campaignId, status }: { campaignId: string; status: CampaignStatus }): Promise<void> {
      await db.$transaction(async (tx) => {
        await tx.campaign.update({ where: { id: campaignId }, data: { status } });
        if (status === 'STOPPED') {
          await tx.lead.updateMany({
            where: { campaignId, status: { in: ['queued', 'dialing'] } },
            data: { status: 'cancelled' },
          });
        }
      });
    },

    /** Wakes every running lead workflow of the campaign (waiting on it, or between rungs); returns how many were signalled. */
    async notifyCampaignLeads({ campaignId }: { campaignId: string }): Promise<number> {
      let signalled = 0;
      const pending: Promise<unknown>[] = [];
      const query = `CampaignId = "${campaignId}" AND WorkflowType = "leadDialWorkflow" AND ExecutionStatus = "Running"`;
      for await (const execution of temporal.workflow.list({ query })) {
        pending.push(
          temporal.workflow
            .getHandle(execution.workflowId, execution.runId)
            .signal(campaignChangedSignal)
            .catch(() => undefined),
        );
        signalled++;
        if (pending.length >= 50) await Promise.all(pending.splice(0));
      }
      await Promise.all(pending);
      return signalled;
    },
  };
}
