import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createSimulatedTelephony } from '../activities/providers/simulated-telephony';
import { leadWorkflowId } from '../api/services/leads';
import { createDatabase } from '../lib/database';
import { freePort, waitFor } from '../scripts/stack/child-process';
import { startEmbeddedTemporal } from '../scripts/stack/temporal';
import { startTestApi } from './support/api';
import { useTestDatabase } from './support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from './support/ladders';
import { startTcpProxy } from './support/tcp-proxy';
import { startTestWorker, useTemporalClient } from './support/temporal';
import { createTestWorkspace } from './support/workspace';

const { db, url } = await useTestDatabase();
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function busyLeads(api: Awaited<ReturnType<typeof startTestApi>>, count: number) {
  const campaign = await db.campaign.create({
    data: { workspaceId: owner.workspaceId, name: 'Durable', acceptsLeadPush: true, status: 'RUNNING', dialLadder: QUICK_LADDER, callingWindow: ALWAYS_OPEN },
  });
  const keys = Array.from({ length: count }, () => randomUUID());
  const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
    key: owner.key, body: { leads: keys.map((idempotencyKey, index) => ({ lead: { phone: `+141555501${String(index).padStart(2, '0').slice(0, 1)}5` }, idempotencyKey })) },
  });
  expect(((await response.json()) as { summary: unknown }).summary).toEqual({ queued: count, duplicate: 0, rejected: 0 });
  return { campaignId: campaign.id, keys };
}

async function expectEveryAttemptOnce(campaignId: string, leads: number) {
  const rows = await db.lead.findMany({ where: { campaignId }, include: { calls: true } });
  expect(rows).toHaveLength(leads);
  for (const lead of rows) {
    expect(lead.status).toBe('failed');
    expect(lead.calls.map((call) => call.attempt).sort()).toEqual([1, 2, 3]);
  }
  const attemptIds = rows.flatMap((lead) => lead.calls.map((call) => call.attemptId));
  expect(await db.simulatedProviderCall.count({ where: { attemptId: { in: attemptIds } } })).toBe(leads * 3);
}

describe('accepted leads survive their dependencies going away', () => {
  it('PostgreSQL unreachable from the worker mid-ladder: activities retry and every lead finishes, one call per attempt', async () => {
    const temporal = await useTemporalClient();
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const workerUrl = new URL(url);
    workerUrl.port = String(proxy.port);
    const workerDb = createDatabase(workerUrl.toString());
    afterAll(() => workerDb.$disconnect());
    await startTestWorker(temporal.taskQueue, { db: workerDb, calls: createSimulatedTelephony(workerDb) });
    const api = await startTestApi({ db, url, temporal });

    const { campaignId, keys } = await busyLeads(api, 10);
    while ((await db.call.count({ where: { campaignId } })) < 10) await sleep(50);
    await proxy.cut();
    await sleep(3_000);
    await proxy.restore();
    const results = await Promise.all(keys.map((key) => temporal.client.workflow.getHandle(leadWorkflowId(campaignId, key)).result()));
    expect(results.every((result) => result.attempts === 3 && result.outcome === 'busy')).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10);
  }, 90_000);

  it('the API process killed right after answering: every lead it reported queued is dialed', async () => {
    const temporal = await useTemporalClient();
    await startTestWorker(temporal.taskQueue, { db, calls: createSimulatedTelephony(db) });
    const port = await freePort();
    const apiProcess = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { ...process.env, DATABASE_URL: url, TEMPORAL_ADDRESS: inject('stack').temporalAddress, TEMPORAL_TASK_QUEUE: temporal.taskQueue, PORT: String(port) },
      stdio: 'ignore',
    });
    // Killed below in any case; should the test fail first, it must not outlive the run.
    process.once('exit', () => apiProcess.kill('SIGKILL'));
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitFor('API process', async () => {
      if (!(await fetch(`${baseUrl}/health`)).ok) throw new Error('not up');
    }, 30_000);
    const { campaignId, keys } = await busyLeads({ request: (method, pathname, options = {}) => fetch(`${baseUrl}${pathname}`, {
      method, headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' }, body: JSON.stringify(options.body),
    }) } as Awaited<ReturnType<typeof startTestApi>>, 10);
    apiProcess.kill('SIGKILL');
    const results = await Promise.all(keys.map((key) => temporal.client.workflow.getHandle(leadWorkflowId(campaignId, key)).result()));
    expect(results.every((result) => result.attempts === 3)).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10);
  }, 90_000);

  it('the Temporal server killed and restarted mid-ladder: every lead finishes from its persisted history', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-restart-'));
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const options = { cliPath: process.env.TEMPORAL_CLI_PATH!, port, uiPort: null, dbFile: path.join(dataDir, 'temporal.db'), quiet: true };
    let server = await startEmbeddedTemporal(options);
    afterAll(() => server.stop());
    const temporal = await useTemporalClient(undefined, server.address);
    await startTestWorker(temporal.taskQueue, { db, calls: createSimulatedTelephony(db) }, server.address);
    const api = await startTestApi({ db, url, temporal });

    const { campaignId, keys } = await busyLeads(api, 10);
    while ((await db.call.count({ where: { campaignId } })) < 10) await sleep(50);
    await server.process.stop('SIGKILL');
    server = await startEmbeddedTemporal(options);
    const results = await Promise.all(keys.map((key) => temporal.client.workflow.getHandle(leadWorkflowId(campaignId, key)).result()));
    expect(results.every((result) => result.attempts === 3)).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10);
  }, 120_000);
});
