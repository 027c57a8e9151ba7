import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resumeOrWithdraw } from '../../lib/calls/call-lines';
import { applyCallEvent } from '../../lib/calls/call-end';
import { finishLeadOnce } from '../../lib/leads/lead-final-status';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { takeFirstLine } from '../support/calls';
import { until } from '../support/until';

/*
 * A lead's final status never changes (lib/leads/lead-final-status.ts, docs/features/leads.md#a-final-status-never-changes):
 * a stop's cancelled stands against the end of the call it hung up (the call end's statement and the ladder's
 * settleLead), a withdrawal while paused or stopped, and every later finish (a journey's end, finishLead).
 */

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
// Slow enough to stop a call while it talks: answered 1.2 s after the dial, 6 s of talk.
const carrier = await startTestCarrier(db, { timeScale: 0.2 });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api) });

const leadStatus = async (id: string) => (await db.lead.findUniqueOrThrow({ where: { id } })).status;

async function campaignOf(workspaceId: string, status: 'RUNNING' | 'PAUSED' | 'STOPPED' = 'RUNNING') {
  return db.campaign.create({
    data: {
      workspaceId,
      name: 'Final status',
      acceptsLeadPush: true,
      status,
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls: 10,
    },
  });
}

/** A lead of a new running campaign, its first attempt dialing (no carrier id yet). */
async function dialingLead(workspaceId: string, settlesLeadOn?: string[]) {
  const campaign = await campaignOf(workspaceId);
  const dialing = await takeFirstLine(db, { workspaceId }, campaign.id, settlesLeadOn);
  expect(await leadStatus(dialing.lead.id)).toBe('dialing');
  return { ...dialing, campaign };
}

/** What the stop writes (activities/campaigns/campaigns.ts setCampaignStatus) before it hangs the calls up. */
async function stop(campaignId: string) {
  await db.campaign.update({ where: { id: campaignId }, data: { status: 'STOPPED' } });
  await db.lead.updateMany({
    where: { campaignId, status: { in: ['queued', 'dialing'] } },
    data: { status: 'cancelled' },
  });
}

describe('a final lead status never changes', () => {
  it("the end of a call a stop hung up leaves the stop's cancelled (the call end's own statement)", async () => {
    const owner = await createTestWorkspace(db);
    const { lead, campaign, attemptId } = await dialingLead(owner.workspaceId, ['busy']);
    await stop(campaign.id);
    const ended = await applyCallEvent(db.sql, 'simulated', {
      eventId: randomUUID(),
      providerCallId: `sim-${attemptId}`,
      attemptId,
      status: 'busy',
      occurredAt: new Date().toISOString(),
    });
    expect(ended).toMatchObject({ found: true, applied: true, ended: { outcome: 'busy' } });
    expect(await leadStatus(lead.id)).toBe('cancelled');
  });

  it('a withdrawal (the campaign paused or stopped) queues an open lead again, never a cancelled one', async () => {
    const owner = await createTestWorkspace(db);
    const paused = await dialingLead(owner.workspaceId);
    await db.campaign.update({ where: { id: paused.campaign.id }, data: { status: 'PAUSED' } });
    expect((await resumeOrWithdraw(db, { leadId: paused.lead.id, attemptId: paused.attemptId }))?.verdict).toBe(
      'campaign_on_hold',
    );
    expect(await leadStatus(paused.lead.id)).toBe('queued');

    const stopped = await dialingLead(owner.workspaceId);
    await stop(stopped.campaign.id);
    expect((await resumeOrWithdraw(db, { leadId: stopped.lead.id, attemptId: stopped.attemptId }))?.verdict).toBe(
      'campaign_stopped',
    );
    expect(await db.call.count({ where: { attemptId: stopped.attemptId } })).toBe(0);
    expect(await leadStatus(stopped.lead.id)).toBe('cancelled');
  });

  it('every finish (settleLead, finishLead, a journey run’s end) writes only over an open status', async () => {
    const owner = await createTestWorkspace(db);
    const { lead } = await dialingLead(owner.workspaceId);
    expect(await finishLeadOnce(db.sql, lead.id, 'failed')).toEqual({ changed: true, hasEndpoint: false });
    for (const status of ['completed', 'cancelled', 'failed'] as const)
      expect(await finishLeadOnce(db.sql, lead.id, status)).toEqual({ changed: false, hasEndpoint: false });
    expect(await leadStatus(lead.id)).toBe('failed');
    expect(await finishLeadOnce(db.sql, randomUUID(), 'completed')).toBeNull();
  });

  it('a stop during an answered call: the lead stays cancelled, and lead.finished says cancelled, once', async () => {
    const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
    await db.resultWebhookEndpoint.create({
      data: { workspaceId: owner.workspaceId, url: 'https://example.invalid/hook', secret: 'whsec_test_secret_1234' },
    });
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Stopped mid-call',
        acceptsLeadPush: true,
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
      },
    });
    const transition = (action: string) =>
      api.request('POST', `/campaigns/${campaign.id}/${action}`, { key: owner.key, body: {} });
    expect((await transition('start')).status).toBe(200);
    const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, '+14155550100');
    await until(
      () => db.call.findFirst({ where: { leadId, carrierStatus: 'in-progress', status: 'dialing' } }),
      (call) => call !== null,
    );
    expect((await transition('stop')).status).toBe(200);
    expect(await leadStatus(leadId)).toBe('cancelled');
    expect(await handle.result()).toMatchObject({ attempts: 1 });
    const call = await db.call.findFirstOrThrow({ where: { leadId } });
    expect(call.status).toBe('ended');
    expect(await leadStatus(leadId)).toBe('cancelled');
    const deliveries = await db.resultWebhookDelivery.findMany({
      where: { workspaceId: owner.workspaceId, eventKey: `lead.finished:${leadId}` },
    });
    expect(deliveries).toHaveLength(1);
    expect((deliveries[0]!.payload as { data: { status: string } }).data.status).toBe('cancelled');
  }, 60_000);
});
