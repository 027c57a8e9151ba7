import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../lib/database';
import { freePort, waitFor } from '../../scripts/stack/child-process';
import { createSimulatedCarrierClient } from '../../lib/simulated-carrier/client';
import { startTestApi, type RunningApi } from '../support/api';
import { simulatedCarrierRecord, TEST_CARRIER_SIGNING_SECRET } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from '../support/ladders';
import { leadResult } from '../support/lead-workflows';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

import { startEntryPoint } from '../support/processes';
const { db, url } = await useTestDatabase();
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A production entry point as its own process, on a port of its own; answers once it takes HTTP. Killed when
 * the test that started it finishes (test/support/processes.ts).
 */
async function startProcess(entry: string, port: number, env: NodeJS.ProcessEnv, probe: string) {
  const { child } = startEntryPoint(entry, { DATABASE_URL: url, ...env }, { output: 'ignore' });
  await waitFor(entry, () => fetch(`http://127.0.0.1:${port}${probe}`), 30_000);
  return child;
}

/** The simulated carrier process (npm run simulated-carrier): a call rings 60 ms and talks 300-390 ms. */
const startCarrierProcess = (port: number) =>
  startProcess(
    'simulators/simulated-carrier/main.ts',
    port,
    {
      SIMULATED_CARRIER_PORT: String(port),
      SIMULATED_CARRIER_SIGNING_SECRET: TEST_CARRIER_SIGNING_SECRET,
      SIMULATED_CARRIER_TIME_SCALE: '0.01',
    },
    '/calls?attemptId=probe',
  );

async function kill(child: ChildProcess) {
  child.kill('SIGKILL');
  if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
}

async function pushLeads(api: RunningApi, count: number) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Carrier crash',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
    },
  });
  // Odd leads are busy (three attempts), even ones answered (one).
  const phones = Array.from(
    { length: count },
    (_, index) => `+1415555${String(2000 + index * 10 + (index % 2 ? 5 : 0))}`,
  );
  const keys = phones.map(() => randomUUID());
  const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
    key: owner.key,
    body: { leads: phones.map((phone, index) => ({ lead: { phone }, idempotencyKey: keys[index] })) },
  });
  expect(response.status).toBe(200);
  return { campaignId: campaign.id, keys };
}

async function expectEveryLeadFinishedOnce(
  store: Database,
  campaignId: string,
  keys: string[],
  client: Parameters<typeof leadResult>[0],
) {
  const results = await Promise.all(keys.map((key) => leadResult(client, campaignId, key)));
  const leads = await store.lead.findMany({ where: { campaignId }, include: { calls: true } });
  expect(leads).toHaveLength(keys.length);
  for (const lead of leads) {
    expect(['completed', 'failed']).toContain(lead.status);
    const attempts = lead.calls.map((call) => call.attempt).sort();
    expect(attempts).toEqual(Array.from({ length: lead.phone.endsWith('5') ? 3 : 1 }, (_, index) => index + 1));
    expect(lead.calls.every((call) => call.status === 'ended')).toBe(true);
  }
  const totalCalls = leads.reduce((total, lead) => total + lead.calls.length, 0);
  expect(totalCalls).toBe(results.reduce((total, result) => total + result.attempts, 0));
  // The carrier placed exactly one call per attempt, and every line was given back.
  expect(
    await simulatedCarrierRecord(store).count(
      '"attemptId" = ANY($1)',
      leads.flatMap((lead) => lead.calls.map((call) => call.attemptId)),
    ),
  ).toBe(totalCalls);
  expect((await store.campaign.findUniqueOrThrow({ where: { id: campaignId } })).callsInFlight).toBe(0);
}

describe('the carrier and the event endpoint killed with SIGKILL mid-call', () => {
  it('a carrier killed and restarted: it goes on from its own records, every lead finished, one call per attempt', async () => {
    const temporal = await useTemporalClient(uniqueTaskQueue('carrier-crash'));
    const api = await startTestApi({ db, url, temporal });
    const carrierPort = await freePort();
    let carrier = await startCarrierProcess(carrierPort);
    await startTestWorker(temporal.taskQueue, {
      db,
      calls: createSimulatedCarrierClient({ baseUrl: `http://127.0.0.1:${carrierPort}` }),
      statusCallbackBaseUrl: api.baseUrl,
    });
    const { campaignId, keys } = await pushLeads(api, 20);
    while ((await db.call.count({ where: { campaignId } })) < 10) await sleep(20);
    await kill(carrier);
    await sleep(500);
    carrier = await startCarrierProcess(carrierPort);
    await expectEveryLeadFinishedOnce(db, campaignId, keys, temporal.client);
  }, 120_000);

  it('the API that receives the events killed and restarted: the carrier retries until it answers', async () => {
    const temporal = await useTemporalClient(uniqueTaskQueue('events-crash'));
    const api = await startTestApi({ db, url, temporal });
    const carrierPort = await freePort();
    await startCarrierProcess(carrierPort);
    const eventsPort = await freePort();
    const startEventsApi = () =>
      startProcess(
        'api/main.ts',
        eventsPort,
        {
          PORT: String(eventsPort),
          TEMPORAL_ADDRESS: temporal.connection.options.address,
          TEMPORAL_TASK_QUEUE: temporal.taskQueue,
          SIMULATED_CARRIER_SIGNING_SECRET: TEST_CARRIER_SIGNING_SECRET,
        },
        '/health',
      );
    let events = await startEventsApi();
    await startTestWorker(temporal.taskQueue, {
      db,
      calls: createSimulatedCarrierClient({ baseUrl: `http://127.0.0.1:${carrierPort}` }),
      statusCallbackBaseUrl: `http://127.0.0.1:${eventsPort}`,
    });
    const { campaignId, keys } = await pushLeads(api, 20);
    while ((await db.call.count({ where: { campaignId } })) < 10) await sleep(20);
    await kill(events);
    await sleep(1_000);
    events = await startEventsApi();
    await expectEveryLeadFinishedOnce(db, campaignId, keys, temporal.client);
  }, 120_000);
});
