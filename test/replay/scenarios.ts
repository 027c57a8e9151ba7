import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { Database } from '../../lib/database';
import { leadWorkflowId } from '../../api/services/leads';
import type { CampaignAction, CampaignStatus } from '../../lib/campaign-transitions';
import { addMember, createWorkspace } from '../../lib/workspace-admin';
import { campaignTransitionUpdate, campaignWorkflowId, type campaignWorkflow } from '../../workflows/campaign';
import { leadStateQuery } from '../../workflows/lead-dial';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';

/**
 * Runs recorded into test/histories/<name>.json by `npm run record-histories` and replayed by
 * test/replay.test.ts. A change to workflow code that would break runs in flight fails that replay.
 */
export interface ReplayScenario {
  name: string;
  run(context: ScenarioContext): Promise<string>;
}

interface ScenarioContext {
  db: Database;
  client: Client;
  taskQueue: string;
}

async function campaignFor(db: Database, name: string, status: 'DRAFT' | 'RUNNING') {
  const { id: workspaceId } = await createWorkspace(db, `Replay ${name}`, {});
  await addMember(db, workspaceId, `${name}@replay.localhost`, 'owner');
  return db.campaign.create({ data: { workspaceId, name, acceptsLeadPush: true, status, dialLadder: QUICK_LADDER, callingWindow: ALWAYS_OPEN } });
}

async function startLead({ db, client, taskQueue }: ScenarioContext, campaign: { id: string; workspaceId: string }, key: string, phone: string) {
  const workflowId = leadWorkflowId(campaign.id, key);
  const lead = await db.lead.create({
    data: { workspaceId: campaign.workspaceId, campaignId: campaign.id, idempotencyKey: key, phone, workflowId, requestId: crypto.randomUUID() },
  });
  return client.workflow.start('leadDialWorkflow', { workflowId, taskQueue, args: [{ leadId: lead.id }] });
}

function transition({ client, taskQueue }: ScenarioContext, campaign: { id: string; status: CampaignStatus }, action: CampaignAction) {
  return client.workflow.executeUpdateWithStart(campaignTransitionUpdate, {
    args: [action],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof campaignWorkflow>('campaignWorkflow', {
      workflowId: campaignWorkflowId(campaign.id), taskQueue, args: [{ campaignId: campaign.id, status: campaign.status }], workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

function leadDialScenario(name: string, phone: string, onDoNotCallList = false): ReplayScenario {
  return {
    name,
    async run(context) {
      const campaign = await campaignFor(context.db, name, 'RUNNING');
      if (onDoNotCallList) await context.db.doNotCall.create({ data: { workspaceId: campaign.workspaceId, phone } });
      const handle = await startLead(context, campaign, name, phone);
      await handle.result();
      return handle.workflowId;
    },
  };
}

const pausedThenResumed: ReplayScenario = {
  name: 'lead-dial-paused-then-resumed',
  async run(context) {
    const campaign = await campaignFor(context.db, 'paused-then-resumed', 'DRAFT');
    await transition(context, campaign, 'start');
    const handle = await startLead(context, campaign, 'paused', '+14155550125');
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_rung') await new Promise((r) => setTimeout(r, 50));
    await transition(context, campaign, 'pause');
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_campaign') await new Promise((r) => setTimeout(r, 50));
    await transition(context, campaign, 'resume');
    await handle.result();
    return handle.workflowId;
  },
};

const campaignLifecycle: ReplayScenario = {
  name: 'campaign-start-pause-resume-stop',
  async run(context) {
    const campaign = await campaignFor(context.db, 'lifecycle', 'DRAFT');
    for (const action of ['start', 'pause', 'resume', 'stop'] as const) await transition(context, campaign, action);
    const handle = context.client.workflow.getHandle(campaignWorkflowId(campaign.id));
    await handle.result();
    return handle.workflowId;
  },
};

export const replayScenarios: ReplayScenario[] = [
  // Simulated telephony: the last digit scripts the outcome (see activities/providers/simulated-telephony.ts).
  leadDialScenario('lead-dial-answered', '+14155550120'),
  // The full ladder: three busy attempts with their rung delays.
  leadDialScenario('lead-dial-busy-full-ladder', '+14155550125'),
  leadDialScenario('lead-dial-invalid-number', '+14155550129'),
  leadDialScenario('lead-dial-do-not-call', '+14155550120', true),
  pausedThenResumed,
  campaignLifecycle,
];
