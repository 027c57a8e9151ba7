import { describe, expect, it } from 'vitest';
import { DEFAULT_CARRIER_BREAKER } from '../../lib/dial-ladder/carrier-breaker';
import { campaignWorkflowId } from '../../lib/temporal/workflow-ids';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { pushLead } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

// A carrier outage: the simulated carrier, over HTTP, refuses every dial (its test control POST
// /control/outage) instead of failing calls it placed. Real PostgreSQL, Temporal, API and worker. A
// campaign with a cap of 4 lines can have at most 4 attempts refused at once, so the breaker's minimum
// is 4 here (the default is 10).
const OUTAGE_BREAKER = { ...DEFAULT_CARRIER_BREAKER, minAttempts: 4 };
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const carrier = await startTestCarrier(db);
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(carrier, api), carrierBreaker: OUTAGE_BREAKER });

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });

/** The simulated carrier's test control (not a carrier feature): while on, it refuses every dial 503. */
async function setOutage(on: boolean) {
  const response = await fetch(`${carrier.baseUrl}/control/outage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ on }),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ on });
}

/** How often the campaign's workflow committed a status change (start, pause, resume...). */
async function statusCommits(campaignId: string) {
  const { events } = await temporal.client.workflow.getHandle(campaignWorkflowId(campaignId)).fetchHistory();
  return (events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'setCampaignStatus',
  ).length;
}

describe('a carrier outage (every dial refused)', () => {
  it('the campaign pauses itself; the refused calls are withdrawn and their lines given back; no lead is lost; after the outage a resume calls everyone', async () => {
    await setOutage(true);
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Outage',
        acceptsLeadPush: true,
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        maxConcurrentCalls: 4,
      },
    });
    await transitionCampaign(api, owner.key, campaign.id, 'start');
    // Numbers (555-01XX, reserved for fiction) the simulated carrier answers (last digit 0): only the
    // outage fails them.
    const leads: Array<Awaited<ReturnType<typeof pushLead>>> = [];
    for (let i = 0; i < 16; i++) {
      const phone = `+1${i < 10 ? '415' : '212'}55501${i % 10}0`;
      leads.push(await pushLead(api, owner.key, temporal.client, campaign.id, phone));
    }

    const paused = await until(
      () => db.campaign.findUniqueOrThrow({ where: { id: campaign.id } }),
      (row) => row.status === 'PAUSED',
    );
    expect(paused.statusReason).toMatchObject({ code: 'carrier_failures' });
    const kpis = await api.request('GET', `/campaigns/${campaign.id}/kpis`, { key: owner.key });
    expect(await kpis.json()).toMatchObject({ pausedReason: { code: 'carrier_failures' } });

    // The 4 attempts holding the 4 lines were refused, each counted once however often its dial was
    // retried; the retry after the pause withdrew each call (nothing was placed) and gave its line back.
    const refused = await db.carrierDialRefusal.findMany({ where: { campaignId: campaign.id } });
    expect(new Set(refused.map((refusal) => refusal.attemptId)).size).toBe(4);
    expect(refused.every((refusal) => refusal.error.includes('503'))).toBe(true);
    await until(
      () => db.campaign.findUniqueOrThrow({ where: { id: campaign.id } }),
      (row) => row.callsInFlight === 0,
    );
    await until(
      () => db.call.count({ where: { campaignId: campaign.id } }),
      (count) => count === 0,
    );

    // No lead is lost: each lead is queued in the campaign's line queue and waits for the paused campaign; a lead
    // that had a line has its workflow running, one queued by its push since has none until its line (its row tells).
    // A lead whose dial was refused several times may be between retries (its backoff reaches a minute) when its
    // withdrawn attempt takes its place: the wait allows for it.
    await until(
      () => db.lead.count({ where: { campaignId: campaign.id, waitingFor: 'campaign' } }),
      (count) => count === 16,
      150_000,
    );
    const withWorkflow = await Promise.all(
      leads.map(({ handle }) =>
        handle.describe().then(
          (run) => run.status.name,
          () => null,
        ),
      ),
    );
    expect(withWorkflow.filter((status) => status !== null).every((status) => status === 'RUNNING')).toBe(true);
    expect(withWorkflow.filter((status) => status === 'RUNNING').length).toBeGreaterThanOrEqual(4);
    expect(await db.lead.count({ where: { campaignId: campaign.id, status: 'queued' } })).toBe(16);
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: null } })).toBe(16);
    // Refusals of the same outage tripped it once: start and one pause were committed.
    expect(await statusCommits(campaign.id)).toBe(2);

    await setOutage(false);
    expect((await transitionCampaign(api, owner.key, campaign.id, 'resume')).status).toBe('RUNNING');
    for (const { started } of leads) expect((await (await started()).result()).outcome).toBe('answered');
    expect(await db.call.count({ where: { campaignId: campaign.id, outcome: 'answered' } })).toBe(16);
    expect(await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({
      status: 'RUNNING',
      statusReason: null,
      callsInFlight: 0,
    });
  }, 300_000);
});
