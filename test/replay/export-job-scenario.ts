import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultExportTaskQueue } from '../../lib/config';
import type { Database } from '../../lib/database';
import { EXPORT_COLUMNS } from '../../lib/exports/export-rows';
import { exportJobWorkflowId } from '../../lib/temporal/workflow-ids';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import type { exportJobWorkflow } from '../../workflows/exports/export-job';

/**
 * An export job to the end of its retention: its activities on the export queue (an export worker polls
 * `defaultExportTaskQueue(taskQueue)` while histories are recorded), three calls read in pages of two, and
 * a one-second retention timer.
 */
export const exportJobScenario = {
  name: 'export-job-csv-to-expiry',
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay export job', { plan: 'basic' });
    await addMember(db, workspaceId, 'export-job@replay.localhost', 'owner');
    const campaign = await db.campaign.create({ data: { workspaceId, name: 'export-job' } });
    const lead = await db.lead.create({
      data: {
        workspaceId,
        campaignId: campaign.id,
        idempotencyKey: 'export-job',
        phone: '+14155550120',
        workflowId: `not-started-${randomUUID()}`,
        requestId: randomUUID(),
      },
    });
    const startedAt = new Date(Date.now() - 60_000);
    for (const attempt of [1, 2, 3]) {
      await db.call.create({
        data: {
          workspaceId,
          campaignId: campaign.id,
          leadId: lead.id,
          attempt,
          attemptId: `${lead.id}:${attempt}`,
          provider: 'simulated',
          status: 'ended',
          outcome: 'busy',
          durationMs: 0,
          startedAt: new Date(startedAt.getTime() + attempt * 1000),
          endedAt: new Date(startedAt.getTime() + attempt * 1000),
        },
      });
    }
    const job = await db.exportJob.create({
      data: {
        id: randomUUID(),
        workspaceId,
        campaignId: campaign.id,
        format: 'csv',
        options: { columns: [...EXPORT_COLUMNS], from: null, until: new Date().toISOString() },
        totalRows: 3,
      },
    });
    const handle = await client.workflow.start<typeof exportJobWorkflow>('exportJobWorkflow', {
      workflowId: exportJobWorkflowId(job.id),
      taskQueue,
      args: [
        { exportId: job.id, pageRows: 2, retentionSeconds: 1, activityTaskQueue: defaultExportTaskQueue(taskQueue) },
      ],
      searchAttributes: { CampaignId: [campaign.id], WorkspaceId: [workspaceId] },
    });
    await handle.result();
    return handle.workflowId;
  },
};
