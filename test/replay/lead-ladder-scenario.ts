import { randomUUID } from 'node:crypto';
import { endCall, takeLine } from '../../lib/calls/call-lines';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { prismaSql } from '../../lib/run-sql';
import { handOverLines } from '../../lib/temporal/line-queue';
import { tellLaddersOfOptOut } from '../../lib/temporal/do-not-call';
import type { leadLadderWorkflow } from '../../workflows/dial-ladder/legacy/lead-ladder';
import { ALWAYS_OPEN, QUICK_LADDER, SINGLE_ATTEMPT } from '../support/ladders';
import { WithStartWorkflowOperation, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Database } from '../../lib/database';
import type { CampaignAction, CampaignStatus } from '../../lib/campaigns/campaign-transitions';
import { campaignChangedSignal, campaignTransitionUpdate, leadStateQuery } from '../../lib/temporal/messages';
import { campaignWorkflowId, leadWorkflowId } from '../../lib/temporal/workflow-ids';
import type { campaignWorkflow } from '../../workflows/campaigns/campaign';

/** What test/replay/scenarios.ts runs a scenario with (its ReplayScenario, without importing it: no cycle). */
interface ScenarioContext {
  db: Database;
  client: Client;
  taskQueue: string;
}

interface ReplayScenario {
  name: string;
  run(context: ScenarioContext): Promise<string>;
}

/** A campaign's transition through its campaign workflow, as the API sends it. */
function transition(
  { client, taskQueue }: ScenarioContext,
  campaign: { id: string; status: CampaignStatus },
  action: CampaignAction,
) {
  return client.workflow.executeUpdateWithStart(campaignTransitionUpdate, {
    args: [action],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof campaignWorkflow>('campaignWorkflow', {
      workflowId: campaignWorkflowId(campaign.id),
      taskQueue,
      args: [{ campaignId: campaign.id, status: campaign.status }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

/*
 * The lean ladder (workflows/dial-ladder/legacy/lead-ladder.ts, leadLadderWorkflow), which every new CLASSIC lead ran
 * from 9d6d50d: its runs as the lead dispatcher starts them (with the campaign's search attributes), through the
 * asynchronous carrier (the simulated carrier over HTTP, its terminal event signalled by the event endpoint).
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function campaignFor(
  db: ScenarioContext['db'],
  name: string,
  status: 'DRAFT' | 'RUNNING',
  options: { dialLadder?: DialLadder; maxConcurrentCalls?: number } = {},
) {
  const { id: workspaceId } = await createWorkspace(db, `Replay ${name}`, {});
  await addMember(db, workspaceId, `${name}@replay.localhost`, 'owner');
  return db.campaign.create({
    data: {
      workspaceId,
      name,
      acceptsLeadPush: true,
      status,
      dialLadder: options.dialLadder ?? QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
      ...(options.maxConcurrentCalls !== undefined && { maxConcurrentCalls: options.maxConcurrentCalls }),
    },
  });
}

export async function storeLead(
  db: ScenarioContext['db'],
  campaign: { id: string; workspaceId: string },
  key: string,
  phone: string,
) {
  return db.lead.create({
    data: {
      workspaceId: campaign.workspaceId,
      campaignId: campaign.id,
      idempotencyKey: key,
      phone,
      workflowId: leadWorkflowId(campaign.id, key),
      requestId: randomUUID(),
    },
  });
}

/** The lean ladder's types: the first (9d6d50d), and its successor that lets a call's end settle its lead. */
export type LadderType = 'leadLadderWorkflow' | 'leadLadderWorkflowV2';

/** Starts a stored lead's lean ladder as lib/temporal/start-lead-workflow.ts does (a lead given a line at once). */
export function startLadder(
  { client, taskQueue }: ScenarioContext,
  lead: { id: string; workflowId: string; campaignId: string; workspaceId: string },
  startDelayMs?: number,
  type: LadderType = 'leadLadderWorkflow',
) {
  return client.workflow.start<typeof leadLadderWorkflow>(type, {
    workflowId: lead.workflowId,
    taskQueue,
    args: [{ leadId: lead.id }],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    searchAttributes: { CampaignId: [lead.campaignId], WorkspaceId: [lead.workspaceId] },
    ...(startDelayMs !== undefined && { startDelay: startDelayMs }),
  });
}

function ladderScenario(
  name: string,
  phone: string,
  onDoNotCallList = false,
  type: LadderType = 'leadLadderWorkflow',
  dialLadder?: DialLadder,
): ReplayScenario {
  return {
    name,
    async run(context) {
      const campaign = await campaignFor(context.db, name, 'RUNNING', { ...(dialLadder && { dialLadder }) });
      if (onDoNotCallList)
        await context.db.doNotCall.create({ data: { workspaceId: campaign.workspaceId, phone, source: 'api' } });
      const handle = await startLadder(context, await storeLead(context.db, campaign, name, phone), undefined, type);
      await handle.result();
      return handle.workflowId;
    },
  };
}

/** Holds the campaign's one line with a call of a lead that has no workflow (as a call of another lead would). */
async function holdTheLine(db: ScenarioContext['db'], campaign: { id: string; workspaceId: string }) {
  const holder = await storeLead(db, campaign, 'holder', '+14155550121');
  const attemptId = `${holder.id}:1`;
  const decision = await takeLine(db.sql, { leadId: holder.id, attempt: 1, attemptId, provider: 'simulated' });
  if (decision?.verdict !== 'started') throw new Error(`the holder got no line: ${decision?.verdict}`);
  return attemptId;
}

/** Ends the holder's call: its line is handed to the first in the queue, whose workflow is woken as the API does. */
async function giveTheLineBack({ db, client, taskQueue }: ScenarioContext, attemptId: string) {
  const { handedOver } = await endCall(db, attemptId, { providerCallId: null, outcome: 'answered', durationMs: 1_000 });
  if (handedOver.length !== 1) throw new Error(`the line was handed to ${handedOver.length} entries`);
  await handOverLines(prismaSql(db), client, handedOver, taskQueue);
}

/** A running lead finds no free line: it queues, sleeps, is woken by lineGranted and dials on the line handed over. */
const queuedThenGranted: ReplayScenario = {
  name: 'lead-ladder-queued-then-granted',
  async run(context) {
    const campaign = await campaignFor(context.db, 'lead-ladder-queued', 'RUNNING', {
      dialLadder: SINGLE_ATTEMPT,
      maxConcurrentCalls: 1,
    });
    const holding = await holdTheLine(context.db, campaign);
    const lead = await storeLead(context.db, campaign, 'queued', '+14155550120');
    const handle = await startLadder(context, lead);
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_line') await sleep(50);
    await giveTheLineBack(context, holding);
    await handle.result();
    return handle.workflowId;
  },
};

/** A lead queued by its push (api/leads/lead-store.ts), its line's holder, and its place in the queue. */
async function queuedByPush(context: ScenarioContext, name: string) {
  const campaign = await campaignFor(context.db, name, 'RUNNING', {
    dialLadder: SINGLE_ATTEMPT,
    maxConcurrentCalls: 1,
  });
  const holding = await holdTheLine(context.db, campaign);
  const lead = await storeLead(context.db, campaign, 'pushed', '+14155550120');
  await context.db.lineQueue.create({
    data: {
      campaignId: campaign.id,
      leadId: lead.id,
      attemptId: `${lead.id}:1`,
      workflowId: lead.workflowId,
      byPush: true,
    },
  });
  return { holding, lead };
}

/**
 * A lead queued by its push has no workflow until a line is handed to it: the hand-over starts it, with lineGranted
 * (signal-with-start), and it dials at once.
 */
const pushedStartedByItsLine: ReplayScenario = {
  name: 'lead-ladder-pushed-started-by-its-line',
  async run(context) {
    const { holding, lead } = await queuedByPush(context, 'lead-ladder-pushed-started');
    await giveTheLineBack(context, holding);
    const handle = context.client.workflow.getHandle(lead.workflowId);
    await handle.result();
    return handle.workflowId;
  },
};

/**
 * The earlier release started a lead queued by its push with an hour's delay; lineGranted, sent with start, ended the
 * delay when a line was handed to it. Kept while such runs may still wait: the same workflow type replays both.
 */
const EARLIER_RELEASE_START_DELAY_MS = 60 * 60_000;
const pushedThenGranted: ReplayScenario = {
  name: 'lead-ladder-pushed-then-granted',
  async run(context) {
    const { holding, lead } = await queuedByPush(context, 'lead-ladder-pushed');
    const handle = await startLadder(context, lead, EARLIER_RELEASE_START_DELAY_MS);
    await giveTheLineBack(context, holding);
    await handle.result();
    return handle.workflowId;
  },
};

/** Paused between two busy rungs: the lead waits in the queue for its campaign; the resume hands it a line. */
const pausedThenResumed: ReplayScenario = {
  name: 'lead-ladder-paused-then-resumed',
  async run(context) {
    const campaign = await campaignFor(context.db, 'lead-ladder-paused', 'DRAFT', {
      dialLadder: { ...QUICK_LADDER, rungs: [{ delaySeconds: 0 }, { delaySeconds: 2 }, { delaySeconds: 1 }] },
    });
    await transition(context, campaign, 'start');
    const handle = await startLadder(context, await storeLead(context.db, campaign, 'paused', '+14155550125'));
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_rung') await sleep(50);
    await transition(context, { ...campaign, status: 'RUNNING' }, 'pause');
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_campaign') await sleep(50);
    await transition(context, { ...campaign, status: 'RUNNING' }, 'resume');
    await handle.result();
    return handle.workflowId;
  },
};

/**
 * The campaign's hold woken by campaignChanged itself (workflows/campaigns/campaign-hold.ts), which no other history
 * holds: a signal during a rung's delay (the lead asks its campaign's status, RUNNING, and waits on), then, paused, the
 * attempt on hold woken by a signal (it attempts again, still on hold), and the resume, which hands it a line. Recorded
 * on the code before the hold was one helper (each ladder's own copy), so its replay shows the helper gives the same
 * commands.
 */
const heldByCampaignSignals: ReplayScenario = {
  name: 'lead-ladder-v2-held-by-campaign-signals',
  async run(context) {
    const campaign = await campaignFor(context.db, 'lead-ladder-v2-held', 'DRAFT', {
      // A delay long enough for the signal and the pause to come during it, on a loaded machine too.
      dialLadder: { ...QUICK_LADDER, rungs: [{ delaySeconds: 0 }, { delaySeconds: 10 }, { delaySeconds: 1 }] },
    });
    await transition(context, campaign, 'start');
    const lead = await storeLead(context.db, campaign, 'held', '+14155550125');
    const handle = await startLadder(context, lead, undefined, 'leadLadderWorkflowV2');
    const phaseIs = async (phase: string) => {
      while ((await handle.query(leadStateQuery)).phase !== phase) await sleep(50);
    };
    await phaseIs('waiting_for_rung');
    await handle.signal(campaignChangedSignal);
    await transition(context, { ...campaign, status: 'RUNNING' }, 'pause');
    await phaseIs('waiting_for_campaign');
    await handle.signal(campaignChangedSignal);
    await sleep(500);
    await phaseIs('waiting_for_campaign');
    await transition(context, { ...campaign, status: 'RUNNING' }, 'resume');
    await handle.result();
    return handle.workflowId;
  },
};

/**
 * A lead waiting an hour for its next rung is told its number was put on the Do-Not-Call list (patch
 * opt-out-ends-wait, lib/temporal/do-not-call.ts): it ends do_not_call at once, its rung never attempted.
 */
const optedOutWhileWaiting: ReplayScenario = {
  name: 'lead-ladder-v2-opted-out-while-waiting',
  async run(context) {
    const campaign = await campaignFor(context.db, 'lead-ladder-v2-opted-out', 'RUNNING', {
      dialLadder: { ...QUICK_LADDER, rungs: [{ delaySeconds: 0 }, { delaySeconds: 3_600 }] },
    });
    const phone = '+14155550125';
    const lead = await storeLead(context.db, campaign, 'opted-out', phone);
    const handle = await startLadder(context, lead, undefined, 'leadLadderWorkflowV2');
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_rung') await sleep(50);
    await context.db.doNotCall.create({ data: { workspaceId: campaign.workspaceId, phone, source: 'api' } });
    const told = await tellLaddersOfOptOut(context.client, prismaSql(context.db), {
      workspaceId: campaign.workspaceId,
      phones: [phone],
    });
    if (told !== 1) throw new Error(`${told} ladders told of the opt-out`);
    const result = await handle.result();
    if (result.outcome !== 'do_not_call' || result.attempts !== 2)
      throw new Error(`the ladder ended ${JSON.stringify(result)}`);
    return handle.workflowId;
  },
};

export const leadLadderScenarios: ReplayScenario[] = [
  // The simulated carrier: the last digit scripts the outcome (simulators/simulated-carrier/timeline.ts).
  ladderScenario('lead-ladder-answered', '+14155550120'),
  // Three busy attempts with their rung delays.
  ladderScenario('lead-ladder-busy-full-ladder', '+14155550125'),
  ladderScenario('lead-ladder-do-not-call', '+14155550120', true),
  queuedThenGranted,
  pushedThenGranted,
  pushedStartedByItsLine,
  pausedThenResumed,
  // Its successor (leadLadderWorkflowV2): a busy last rung settled by the call's end (one local activity); three busy
  // rungs, the first two settled by the ladder; an answered call, whose aftermath the ladder runs.
  ladderScenario('lead-ladder-v2-busy-settled-at-end', '+14155550125', false, 'leadLadderWorkflowV2', SINGLE_ATTEMPT),
  ladderScenario('lead-ladder-v2-busy-full-ladder', '+14155550125', false, 'leadLadderWorkflowV2'),
  ladderScenario('lead-ladder-v2-answered', '+14155550120', false, 'leadLadderWorkflowV2'),
  heldByCampaignSignals,
  optedOutWhileWaiting,
];
