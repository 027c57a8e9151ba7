import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../activities';
import { createResultWebhookEndpoint } from '../../lib/result-webhooks/result-webhooks';
import { campaignWorkflowId } from '../../lib/temporal/workflow-ids';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';
import { TEST_KEYRING } from '../support/keyring';

/*
 * A stop of a campaign whose leads wait in its line queue (docs/features/dial-ladder.md#lines-handed-out): the leads
 * queued by their push that never had a line end without ever having a workflow, the outbox's sweep leaves them
 * alone, and each gets the lead.finished event its workflow would have sent, only when its workspace has an endpoint.
 */

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// The outbox's sweep runs, quickly: a lead it should not start would be started within a second.
const api = await startTestApi({ db, url, temporal, sweepLeads: { staleAfterMs: 500 } });
/** Answered calls of 36 s simulated time in 3.6 s: the one line stays busy while the others wait. */
const carrier = carrierDependencies(await startTestCarrier(db, { timeScale: 0.1 }), api);
await startTestWorker(temporal.taskQueue, { db, ...carrier });

const LEADS = 5;

async function queuedCampaign(workspace: { workspaceId: string; key: string }) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: workspace.workspaceId,
      name: 'Stop with a queue',
      acceptsLeadPush: true,
      status: 'DRAFT',
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls: 1,
    },
  });
  const keys = Array.from({ length: LEADS }, () => randomUUID());
  const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
    key: workspace.key,
    body: { leads: keys.map((idempotencyKey) => ({ lead: { phone: '+14155550100' }, idempotencyKey })) },
  });
  expect(pushed.status).toBe(200);
  expect(await transitionCampaign(api, workspace.key, campaign.id, 'start')).toMatchObject({ status: 'RUNNING' });
  // The one line is on a call: the other leads wait in the queue, queued by their push, with no workflow.
  await until(
    () => db.call.count({ where: { campaignId: campaign.id } }),
    (count) => count >= 1,
  );
  // The line stays on its call for seconds: these are still waiting, never started, when the stop comes.
  const waiting = await db.lineQueue.findMany({ where: { campaignId: campaign.id, byPush: true, grantedAt: null } });
  expect(waiting.length).toBeGreaterThanOrEqual(LEADS - 2);
  return { campaign, waiting: new Set(waiting.map((entry) => entry.leadId)) };
}

/** Stops the campaign and waits for its workflow to end, which it does once every lead has been dealt with. */
async function stop(workspace: { key: string }, campaignId: string) {
  expect(await transitionCampaign(api, workspace.key, campaignId, 'stop')).toMatchObject({ status: 'STOPPED' });
  await temporal.client.workflow.getHandle(campaignWorkflowId(campaignId)).result();
}

async function expectNoWorkflow(workflowId: string) {
  await expect(temporal.client.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

/** The leads still waiting for their first line at the stop, and the others (handed a line before it). */
async function leadsOf(campaignId: string, waiting: ReadonlySet<string>) {
  const leads = await db.lead.findMany({ where: { campaignId } });
  return {
    leads,
    settled: leads.filter((lead) => waiting.has(lead.id)),
    started: leads.filter((lead) => !waiting.has(lead.id)),
  };
}

describe('a stop of a campaign with leads queued by their push', () => {
  it('ends the never-started leads cancelled without a workflow, and sends each one lead.finished', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const receiver = await startReceiver(() => 200);
    const endpoint = await createResultWebhookEndpoint(db, TEST_KEYRING, workspace.workspaceId, { url: receiver.url });
    const { campaign, waiting } = await queuedCampaign(workspace);
    await stop(workspace, campaign.id);

    const { leads, settled, started } = await leadsOf(campaign.id, waiting);
    expect(leads).toHaveLength(LEADS);
    expect(
      settled.every(
        (lead) => lead.status === 'cancelled' && lead.workflowStartedAt === null && lead.settledWithoutWorkflowAt,
      ),
    ).toBe(true);
    expect(started.every((lead) => lead.workflowStartedAt !== null)).toBe(true);
    // The lead that had the line ends too (cancelled in the database, its call hung up).
    for (const lead of started) await temporal.client.workflow.getHandle(lead.workflowId).result();

    // The sweep would have started a lead it took for undispatched well within this.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const lead of settled) await expectNoWorkflow(lead.workflowId);
    expect(
      (await db.lead.findMany({ where: { id: { in: settled.map((lead) => lead.id) } } })).every(
        (lead) => lead.workflowStartedAt === null,
      ),
    ).toBe(true);

    // Exactly one lead.finished each, as leadLadderWorkflow would have sent for a lead stopped before its call.
    for (const lead of settled) {
      const deliveries = await db.resultWebhookDelivery.findMany({
        where: { endpointId: endpoint.id, eventKey: `lead.finished:${lead.id}` },
      });
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]!.payload).toMatchObject({
        type: 'lead.finished',
        data: { leadId: lead.id, status: 'cancelled', outcome: 'campaign_stopped', attempts: 1, calls: [] },
      });
    }
    await until(
      async () => receiver.received.length,
      (count) => count >= settled.length,
    );
  }, 180_000);

  it('sends no lead.finished when the workspace has no endpoint, and starts no workflow for them', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const { campaign, waiting } = await queuedCampaign(workspace);
    await stop(workspace, campaign.id);
    const { leads, settled } = await leadsOf(campaign.id, waiting);
    expect(settled.every((lead) => lead.status === 'cancelled')).toBe(true);
    expect(leads.every((lead) => lead.status !== 'queued' && lead.status !== 'dialing')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const lead of settled) await expectNoWorkflow(lead.workflowId);
    expect(await db.resultWebhookDelivery.count({ where: { workspaceId: workspace.workspaceId } })).toBe(0);
  }, 180_000);
});

describe('the wake-ups of a stop', () => {
  const activities = createActivities({
    db,
    ...carrier,
    whatsapp: createSimulatedWhatsApp(db),
    temporal: temporal.client,
  });

  it('go through the leads by id, heartbeat the last one, and on a retry carry on after the heartbeated one', async () => {
    const workspace = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    const campaign = await db.campaign.create({
      data: {
        workspaceId: workspace.workspaceId,
        name: 'Stopped',
        acceptsLeadPush: true,
        status: 'STOPPED',
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
      },
    });
    // Cancelled by the stop: each may have a workflow, so each is woken (signal-with-start). Marked started, as the
    // outbox marks a lead it started, so that this file's quick sweep (staleAfterMs 500) leaves them to the stop: it
    // had started the first two itself whenever the test took longer than half a second to get to them.
    const leads = await Promise.all(
      Array.from({ length: 4 }, () =>
        db.lead.create({
          data: {
            workspaceId: workspace.workspaceId,
            campaignId: campaign.id,
            idempotencyKey: randomUUID(),
            phone: '+14155550100',
            status: 'cancelled',
            workflowId: `stopped-${randomUUID()}`,
            workflowStartedAt: new Date(),
            requestId: randomUUID(),
          },
        }),
      ),
    );
    leads.sort((a, b) =>
      Buffer.from(a.id.replace(/-/g, ''), 'hex').compare(Buffer.from(b.id.replace(/-/g, ''), 'hex')),
    );
    const heartbeats: unknown[] = [];
    const environment = new MockActivityEnvironment({ taskQueue: temporal.taskQueue, heartbeatDetails: leads[1]!.id });
    environment.on('heartbeat', (details: unknown) => heartbeats.push(details));
    expect(await environment.run(activities.notifyCampaignLeads, { campaignId: campaign.id })).toBeGreaterThanOrEqual(
      2,
    );
    // The first two were done before the retry: not woken again.
    for (const lead of leads.slice(0, 2)) await expectNoWorkflow(lead.workflowId);
    for (const lead of leads.slice(2)) await temporal.client.workflow.getHandle(lead.workflowId).result();
    expect(heartbeats.at(-1)).toBe(leads.at(-1)!.id);
  }, 60_000);
});
