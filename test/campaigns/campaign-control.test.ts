import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { campaignWorkflowId } from '../../lib/temporal/workflow-ids';
import type { campaignWorkflow } from '../../workflows/campaigns/campaign';
import type { LeadState } from '../../lib/dial-ladder/lead-state';
import { campaignStatusQuery, campaignTransitionUpdate, leadStateQuery } from '../../lib/temporal/messages';
import { startTestApi } from '../support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { startTestWorker, unreachableTemporal, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { pushLead as pushQueuedLead, pushLeadWithWorkflow } from '../support/lead-workflows';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const transition = (campaignId: string, action: string) =>
  api.request('POST', `/campaigns/${campaignId}/${action}`, { key: owner.key, body: {} });

async function campaignWith(dialLadder: DialLadder) {
  return db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Control',
      acceptsLeadPush: true,
      dialLadder,
      callingWindow: ALWAYS_OPEN,
    },
  });
}

const pushLeadOnly = (campaignId: string, phone: string) =>
  pushQueuedLead(api, owner.key, temporal.client, campaignId, phone);
const pushLead = (campaignId: string, phone: string) =>
  pushLeadWithWorkflow(api, owner.key, temporal.client, campaignId, phone);

async function untilState(
  handle: { query: (q: typeof leadStateQuery) => Promise<LeadState> },
  predicate: (state: LeadState) => boolean,
) {
  for (let tries = 0; tries < 100; tries++) {
    const state = await handle.query(leadStateQuery);
    if (predicate(state)) return state;
    await sleep(100);
  }
  throw new Error('the lead never reached the expected state');
}

describe('campaign control', () => {
  it('accepts only the transitions the state allows, and says why it refuses the others', async () => {
    const campaign = await campaignWith(QUICK_LADDER);
    const steps: Array<[string, number, unknown]> = [
      ['pause', 409, { error: 'invalid_campaign_transition', from: 'DRAFT', action: 'pause' }],
      ['start', 200, 'RUNNING'],
      ['start', 409, { error: 'invalid_campaign_transition', from: 'RUNNING', action: 'start' }],
      ['pause', 200, 'PAUSED'],
      ['pause', 409, { error: 'invalid_campaign_transition', from: 'PAUSED', action: 'pause' }],
      ['resume', 200, 'RUNNING'],
      ['stop', 200, 'STOPPED'],
      ['resume', 409, { error: 'invalid_campaign_transition', from: 'STOPPED', action: 'resume' }],
      ['start', 409, { error: 'invalid_campaign_transition', from: 'STOPPED', action: 'start' }],
    ];
    for (const [action, status, expected] of steps) {
      const response = await transition(campaign.id, action);
      const body = (await response.json()) as Record<string, unknown>;
      expect(response.status, action).toBe(status);
      if (status === 200) expect(body.status, action).toBe(expected);
      else expect(body, action).toEqual(expected);
    }
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).status).toBe('STOPPED');
  });

  it('answers 503 temporal_unavailable, and changes nothing, while Temporal cannot be reached', async () => {
    const cutOff = await startTestApi({ db, url, temporal: await unreachableTemporal(temporal.taskQueue) });
    const campaign = await campaignWith(QUICK_LADDER);
    const response = await cutOff.request('POST', `/campaigns/${campaign.id}/start`, { key: owner.key, body: {} });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({ error: 'temporal_unavailable' });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).status).toBe('DRAFT');
  }, 30_000);

  it('holds leads of a campaign that has not started, and dials them once it starts', async () => {
    const campaign = await campaignWith(QUICK_LADDER);
    const { leadId, started } = await pushLeadOnly(campaign.id, '+14155550120');
    // Queued by its push in the campaign's line queue, waiting for the campaign; it has no workflow until a line is
    // handed to it (docs/features/dial-ladder.md#lines-handed-out).
    expect(await db.lead.findUniqueOrThrow({ where: { id: leadId } })).toMatchObject({
      waitingFor: 'campaign',
      workflowStartedAt: null,
    });
    expect(await db.lineQueue.findMany({ where: { leadId } })).toMatchObject([{ byPush: true, grantedAt: null }]);
    const { workflowId } = await db.lead.findUniqueOrThrow({ where: { id: leadId } });
    await expect(temporal.client.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    expect(await db.call.count({ where: { leadId } })).toBe(0);
    expect((await transition(campaign.id, 'start')).status).toBe(200);
    expect(await (await started()).result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
  });

  it('pause holds a lead before its next attempt; resume continues it where it stood', async () => {
    const ladder: DialLadder = {
      ...QUICK_LADDER,
      rungs: [{ delaySeconds: 0 }, { delaySeconds: 2 }, { delaySeconds: 1 }],
    };
    const campaign = await campaignWith(ladder);
    expect((await transition(campaign.id, 'start')).status).toBe(200);
    const { leadId, handle } = await pushLead(campaign.id, '+14155550125');
    await untilState(handle, (state) => state.phase === 'waiting_for_rung' && state.attempt === 2);
    expect((await transition(campaign.id, 'pause')).status).toBe(200);
    // Past the rung's delay: the lead is held, not dialed.
    const held = await untilState(handle, (state) => state.phase === 'waiting_for_campaign');
    expect(held.attempt).toBe(2);
    await sleep(1_000);
    expect(await db.call.count({ where: { leadId } })).toBe(1);

    expect((await transition(campaign.id, 'resume')).status).toBe(200);
    expect(await handle.result()).toEqual({ status: 'failed', outcome: 'busy', attempts: 3 });
    const calls = await db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } });
    expect(calls.map((call) => call.attempt)).toEqual([1, 2, 3]);
    expect(await simulatedCarrierRecord(db).count(`"attemptId" LIKE $1 || '%'`, leadId)).toBe(3);
  });

  it('stop cancels queued retries: a lead waiting for its next rung ends at once, cancelled', async () => {
    const ladder: DialLadder = { ...QUICK_LADDER, rungs: [{ delaySeconds: 0 }, { delaySeconds: 3600 }] };
    const campaign = await campaignWith(ladder);
    expect((await transition(campaign.id, 'start')).status).toBe(200);
    const { leadId, handle } = await pushLead(campaign.id, '+14155550126');
    await untilState(handle, (state) => state.phase === 'waiting_for_rung');
    const stopped = await transition(campaign.id, 'stop');
    expect(stopped.status).toBe(200);
    expect((await db.lead.findUniqueOrThrow({ where: { id: leadId } })).status).toBe('cancelled');
    expect(await handle.result()).toEqual({ status: 'cancelled', outcome: 'campaign_stopped', attempts: 2 });
    expect(await db.call.count({ where: { leadId } })).toBe(1);
    const refused = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      key: owner.key,
      body: { lead: { phone: '+14155550120' }, idempotencyKey: 'after-stop' },
    });
    expect(refused.status).toBe(409);
  });
});

describe('the campaign workflow over a long life', () => {
  it('continues as new when its history grows, keeping its status and taking further transitions', async () => {
    const campaign = await campaignWith(QUICK_LADDER);
    const workflowId = campaignWorkflowId(campaign.id);
    const update = (action: 'start' | 'pause' | 'resume' | 'stop') =>
      temporal.client.workflow.executeUpdateWithStart(campaignTransitionUpdate, {
        args: [action],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof campaignWorkflow>('campaignWorkflow', {
          workflowId,
          taskQueue: temporal.taskQueue,
          args: [{ campaignId: campaign.id, status: 'DRAFT', historyLimit: 30 }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    await update('start');
    const firstRun = (await temporal.client.workflow.getHandle(workflowId).describe()).runId;
    for (let round = 0; round < 4; round++) {
      expect(await update('pause')).toEqual({ status: 'PAUSED' });
      expect(await update('resume')).toEqual({ status: 'RUNNING' });
    }
    const handle = temporal.client.workflow.getHandle(workflowId);
    expect((await handle.describe()).runId).not.toBe(firstRun);
    expect(await handle.query(campaignStatusQuery)).toBe('RUNNING');
    expect(await update('stop')).toEqual({ status: 'STOPPED' });
    expect((await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).status).toBe('STOPPED');
  });
});
