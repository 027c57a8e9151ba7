import type { Client } from '@temporalio/client';
import type { Database } from '../../lib/database';
import { leadWorkflowId } from '../../api/services/leads';
import { addMember, createWorkspace } from '../../lib/workspace-admin';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';

/**
 * Journeys recorded into test/histories/<name>.json by `npm run record-histories` and replayed by
 * test/replay.test.ts. A change to workflow code that would break runs in flight fails that replay.
 */
export interface ReplayScenario {
  name: string;
  run(context: { db: Database; client: Client; taskQueue: string }): Promise<string>;
}

function leadDialScenario(name: string, phone: string, onDoNotCallList = false): ReplayScenario {
  return {
    name,
    async run({ db, client, taskQueue }) {
      const { id: workspaceId } = await createWorkspace(db, `Replay ${name}`, {});
      await addMember(db, workspaceId, `${name}@replay.localhost`, 'owner');
      if (onDoNotCallList) await db.doNotCall.create({ data: { workspaceId, phone } });
      const campaign = await db.campaign.create({ data: { workspaceId, name, acceptsLeadPush: true, status: 'RUNNING', dialLadder: QUICK_LADDER, callingWindow: ALWAYS_OPEN } });
      const workflowId = leadWorkflowId(campaign.id, name);
      const lead = await db.lead.create({
        data: { workspaceId, campaignId: campaign.id, idempotencyKey: name, phone, workflowId, requestId: crypto.randomUUID() },
      });
      const handle = await client.workflow.start('leadDialWorkflow', { workflowId, taskQueue, args: [{ leadId: lead.id }] });
      await handle.result();
      return workflowId;
    },
  };
}

export const replayScenarios: ReplayScenario[] = [
  // Simulated telephony: the last digit scripts the outcome (see activities/providers/simulated-telephony.ts).
  leadDialScenario('lead-dial-answered', '+14155550120'),
  // The full ladder: three busy attempts with their rung delays.
  leadDialScenario('lead-dial-busy-full-ladder', '+14155550125'),
  leadDialScenario('lead-dial-invalid-number', '+14155550129'),
  leadDialScenario('lead-dial-do-not-call', '+14155550120', true),
];
