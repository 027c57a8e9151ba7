import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultExportTaskQueue } from '../../lib/config';
import type { Database } from '../../lib/database';
import { SHEET_COLUMNS } from '../../lib/sheets/columns';
import { liveSheetWorkflowId } from '../../lib/temporal/workflow-ids';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import type { liveSheetWorkflow } from '../../workflows/sheets/live-sheet';
import { sheetRebuildSignal, sheetSyncSignal } from '../../lib/temporal/messages';
import { insertLeads } from '../support/sheets';

/**
 * A live sheet through its life: created (a full first sync of three leads), rebuilt on sheetRebuild,
 * synced on sheetSync, then deleted (its row removed and its workflow cancelled, which deletes the
 * spreadsheet). Its activities run on the export queue, where an export worker polls while recording.
 */
export const liveSheetScenario = {
  name: 'live-sheet-sync-rebuild-delete',
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay live sheet', { plan: 'basic' });
    await addMember(db, workspaceId, 'live-sheet@replay.localhost', 'owner');
    const campaign = await db.campaign.create({ data: { workspaceId, name: 'live-sheet' } });
    await insertLeads(db, campaign, 3);
    const id = randomUUID();
    await db.liveSheet.create({
      data: {
        id,
        workspaceId,
        campaignId: campaign.id,
        spreadsheetId: id,
        columns: [...SHEET_COLUMNS],
        intervalSeconds: 3600,
      },
    });
    const handle = await client.workflow.start<typeof liveSheetWorkflow>('liveSheetWorkflow', {
      workflowId: liveSheetWorkflowId(id),
      taskQueue,
      args: [
        { sheetId: id, spreadsheetId: id, intervalSeconds: 3600, activityTaskQueue: defaultExportTaskQueue(taskQueue) },
      ],
      searchAttributes: { CampaignId: [campaign.id], WorkspaceId: [workspaceId] },
    });
    const syncFinished = async (syncNumber: number) => {
      for (;;) {
        const sheet = await db.liveSheet.findUniqueOrThrow({ where: { id } });
        if (sheet.syncNumber >= syncNumber && sheet.status === 'idle') return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await syncFinished(1);
    await handle.signal(sheetRebuildSignal);
    await syncFinished(2);
    await handle.signal(sheetSyncSignal);
    await syncFinished(3);
    await db.liveSheet.delete({ where: { id } });
    await handle.cancel();
    await handle.result();
    return handle.workflowId;
  },
};
