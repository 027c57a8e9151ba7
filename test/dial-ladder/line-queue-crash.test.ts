import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { freePort, waitFor } from '../../scripts/stack/child-process';
import { checkedFetch, startTestApi } from '../support/api';
import {
  simulatedCarrierRecord,
  startTestCarrier,
  TEST_CARRIER_SIGNING_SECRET,
  type TestCarrier,
} from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startEntryPoint, type TestProcess } from '../support/processes';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { killWorker, workerProcesses } from '../support/worker-process';
import { createTestWorkspace } from '../support/workspace';

/*
 * The line queue (docs/features/dial-ladder.md#lines-handed-out) across crashes: a worker, then the API, killed with
 * SIGKILL while a campaign's leads wait in its queue for one of its two lines and calls end. Whatever dies, every
 * lead ends with exactly the calls its numbers script, each placed once on the carrier, every line given back and
 * the queue empty. The worker and (in the second test) the API run as processes of their own, as in production.
 */

const { db, url } = await useTestDatabase();
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answered calls of 36-45 s simulated time in 1.1-1.4 s; a busy one ends in 0.1 s. One carrier per test. */
const carrierA = await startTestCarrier(db, { timeScale: 0.03 });
const carrierB = await startTestCarrier(db, { timeScale: 0.03 });

const LINES = 2;
const LEADS = 10;
/** Busy numbers walk the three rungs (a second apart), re-entering the queue at each; answered ones make one call. */
const LADDER: DialLadder = { ...QUICK_LADDER, rungs: [{ delaySeconds: 0 }, { delaySeconds: 1 }, { delaySeconds: 1 }] };

async function queueCampaign(name: string) {
  return db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name,
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: LADDER,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls: LINES,
    },
  });
}

/** Ten leads: every third busy (+1415555…5), the others answered after a talk of 30-39 s (simulated). */
function batch() {
  return Array.from({ length: LEADS }, (_, index) => ({
    lead: { phone: `+1415555${3000 + index * 10 + (index % 3 === 1 ? 5 : 0)}` },
    idempotencyKey: randomUUID(),
  }));
}

/** How far the campaign is: calls recorded, calls ended, entries waiting for a line, lines in use. */
async function progress(campaignId: string) {
  const [calls, ended, waiting, campaign] = await Promise.all([
    db.call.count({ where: { campaignId } }),
    db.call.count({ where: { campaignId, status: 'ended' } }),
    db.lineQueue.count({ where: { campaignId, grantedAt: null } }),
    db.campaign.findUniqueOrThrow({ where: { id: campaignId } }),
  ]);
  return { calls, ended, waiting, dialing: calls - ended, inFlight: campaign.callsInFlight };
}

/**
 * What a crash must never change: each lead finished with exactly the calls its number scripts (one answered, three
 * busy), attempts 1..n each recorded once and ended, each placed once on the carrier (its own records), no more
 * calls at once than the campaign's lines, every line given back, the queue empty and no lead saying it waits.
 */
async function expectEveryLeadDialedOnce(
  client: Parameters<typeof leadResult>[0],
  carrier: TestCarrier,
  campaignId: string,
  leads: ReturnType<typeof batch>,
) {
  const results = await Promise.all(leads.map((lead) => leadResult(client, campaignId, lead.idempotencyKey)));
  const busy = (phone: string) => phone.endsWith('5');
  leads.forEach((lead, index) =>
    expect(results[index], lead.lead.phone).toMatchObject(
      busy(lead.lead.phone)
        ? { status: 'failed', outcome: 'busy', attempts: 3 }
        : { status: 'completed', outcome: 'answered', attempts: 1 },
    ),
  );
  const stored = await db.lead.findMany({ where: { campaignId }, include: { calls: true } });
  expect(stored).toHaveLength(LEADS);
  for (const lead of stored) {
    expect(lead, lead.phone).toMatchObject({
      status: busy(lead.phone) ? 'failed' : 'completed',
      waitingFor: null,
      nextAttemptAt: null,
    });
    expect(lead.calls.map((call) => call.attempt).sort(), lead.phone).toEqual(busy(lead.phone) ? [1, 2, 3] : [1]);
    expect(lead.calls.every((call) => call.status === 'ended')).toBe(true);
  }
  // The carrier's own records: one call per attempt, none for an attempt the database does not know.
  const leadIds = new Set(stored.map((lead) => lead.id));
  const placed = (await simulatedCarrierRecord(db).calls())
    .map((call) => call.attemptId)
    .filter((attemptId) => leadIds.has(attemptId.split(':')[0]!));
  expect(placed.sort()).toEqual(stored.flatMap((lead) => lead.calls.map((call) => call.attemptId)).sort());
  expect(carrier.server.maxLiveCalls).toBeGreaterThan(0);
  expect(carrier.server.maxLiveCalls).toBeLessThanOrEqual(LINES);
  expect((await db.campaign.findUniqueOrThrow({ where: { id: campaignId } })).callsInFlight).toBe(0);
  expect(await db.lineQueue.count({ where: { campaignId } })).toBe(0);
}

describe('the line queue across crashes', () => {
  it('a worker killed while leads wait for a line: the next worker finishes every lead, each call placed once', async () => {
    const temporal = await useTemporalClient(uniqueTaskQueue('queue-worker-crash'));
    // The production API's sweep runs too (starts left behind, lines handed out and left unused).
    const api = await startTestApi({ db, url, temporal, sweepLeads: { staleAfterMs: 10_000 } });
    const startWorkerProcess = workerProcesses({
      databaseUrl: url,
      taskQueue: temporal.taskQueue,
      carrierUrl: carrierA.baseUrl,
      apiUrl: api.baseUrl,
    });
    const campaign = await queueCampaign('Queue, worker crash');
    const first = startWorkerProcess();
    const leads = batch();
    const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
      key: owner.key,
      body: { leads },
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: LEADS,
      duplicate: 0,
      rejected: 0,
    });

    // Killed while both lines are busy with calls on the carrier and leads wait in the queue behind them.
    const atCrash = await until(
      () => progress(campaign.id),
      (now) => now.ended >= 2 && now.dialing === LINES && now.waiting >= 3,
      60_000,
    );
    await killWorker(first);
    // Calls end meanwhile: their events reach the API, which hands their lines on and signals workflows no worker runs.
    await until(
      () => progress(campaign.id),
      (now) => now.ended > atCrash.ended,
      30_000,
    );
    // Handed on in the statement that ended the call, to a lead whose workflow no worker runs now.
    expect(await db.lineQueue.count({ where: { campaignId: campaign.id, grantedAt: { not: null } } })).toBeGreaterThan(
      0,
    );
    startWorkerProcess();

    await expectEveryLeadDialedOnce(temporal.client, carrierA, campaign.id, leads);
  }, 180_000);

  it('the API killed while leads wait and calls end: the carrier retries its events, the next API goes on, each call placed once', async () => {
    const temporal = await useTemporalClient(uniqueTaskQueue('queue-api-crash'));
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    // The production API entry point: pushes, the carrier's events, and its dispatcher's sweeps.
    const startApiProcess = async (): Promise<TestProcess> => {
      const api = startEntryPoint('api/main.ts', {
        DATABASE_URL: url,
        PORT: String(port),
        TEMPORAL_ADDRESS: temporal.connection.options.address,
        TEMPORAL_TASK_QUEUE: temporal.taskQueue,
        SIMULATED_CARRIER_SIGNING_SECRET: TEST_CARRIER_SIGNING_SECRET,
      });
      await waitFor('api/main.ts', () => fetch(`${baseUrl}/health`), 30_000);
      return api;
    };
    let api = await startApiProcess();
    workerProcesses({
      databaseUrl: url,
      taskQueue: temporal.taskQueue,
      carrierUrl: carrierB.baseUrl,
      apiUrl: baseUrl,
    })();
    const campaign = await queueCampaign('Queue, API crash');
    const leads = batch();
    const response = await checkedFetch(`${baseUrl}/v1/campaigns/${campaign.id}/leads/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ leads }),
    });
    expect(((await response.json()) as { summary: unknown }).summary).toEqual({
      queued: LEADS,
      duplicate: 0,
      rejected: 0,
    });

    // Killed while both lines are on calls about to end and leads wait behind them.
    const atCrash = await until(
      () => progress(campaign.id),
      (now) => now.ended >= 2 && now.dialing === LINES && now.waiting >= 3,
      60_000,
    );
    await api.kill();
    // Those calls end on the carrier while no API takes their events (it retries them): their lines stay taken and
    // nobody in the queue moves.
    await sleep(2_500);
    const whileDown = await progress(campaign.id);
    expect(whileDown.calls).toBeGreaterThanOrEqual(atCrash.calls);
    expect(whileDown.waiting).toBeGreaterThan(0);
    api = await startApiProcess();

    await expectEveryLeadDialedOnce(temporal.client, carrierB, campaign.id, leads);
    expect(api.running).toBe(true);
  }, 180_000);
});
