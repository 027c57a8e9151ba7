import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase, type Database } from '../lib/database';
import { ensureDatabase, startEmbeddedPostgres } from '../scripts/stack/postgres';
import { freePort, waitFor } from '../scripts/stack/child-process';
import { ownTemporalServer } from '../scripts/stack/test-temporal';
import { checkedFetch, startTestApi, type RunningApi } from './support/api';
import { carrierDependencies, simulatedCarrierRecord, startTestCarrier } from './support/carrier';
import { useTestDatabase } from './support/database';
import { ALWAYS_OPEN, QUICK_LADDER } from './support/ladders';
import { atTestEnd, execTestProcess, startEntryPoint } from './support/processes';
import { startTcpProxy } from './support/tcp-proxy';
import { startTestWorker, useTemporalClient } from './support/temporal';
import { createTestWorkspace, type TestWorkspace } from './support/workspace';
import { leadResult } from './support/lead-workflows';

const { db, url } = await useTestDatabase();
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit'] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where the leads live: the test file's database, or a cluster of a test's own. */
interface LeadStore {
  db: Database;
  owner: TestWorkspace;
}
const fileStore: LeadStore = { db, owner };

async function busyLeads(api: Pick<RunningApi, 'request'>, count: number, { db, owner }: LeadStore = fileStore) {
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Durable',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: QUICK_LADDER,
      callingWindow: ALWAYS_OPEN,
    },
  });
  const keys = Array.from({ length: count }, () => randomUUID());
  const response = await api.request('POST', `/v1/campaigns/${campaign.id}/leads/batch`, {
    key: owner.key,
    body: {
      leads: keys.map((idempotencyKey, index) => ({
        lead: { phone: `+141555501${String(index).padStart(2, '0').slice(0, 1)}5` },
        idempotencyKey,
      })),
    },
  });
  expect(((await response.json()) as { summary: unknown }).summary).toEqual({
    queued: count,
    duplicate: 0,
    rejected: 0,
  });
  return { campaignId: campaign.id, keys };
}

async function expectEveryAttemptOnce(campaignId: string, leads: number, { db }: LeadStore = fileStore) {
  const rows = await db.lead.findMany({ where: { campaignId }, include: { calls: true } });
  expect(rows).toHaveLength(leads);
  for (const lead of rows) {
    expect(lead.status).toBe('failed');
    expect(lead.calls.map((call) => call.attempt).sort()).toEqual([1, 2, 3]);
  }
  const attemptIds = rows.flatMap((lead) => lead.calls.map((call) => call.attemptId));
  expect(await simulatedCarrierRecord(db).count('"attemptId" = ANY($1)', attemptIds)).toBe(leads * 3);
}

/** The production API entry point in its own process. */
async function spawnApi(temporalAddress: string, taskQueue: string) {
  const port = await freePort();
  // Should the test fail first, the process must not outlive it: killed when the test finishes.
  const apiProcess = startEntryPoint(
    'api/main.ts',
    { DATABASE_URL: url, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, PORT: String(port) },
    { output: 'ignore' },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  // Any answer will do: /health is 503 while Temporal is unreachable.
  await waitFor('API process', () => fetch(`${baseUrl}/health`), 30_000);
  return {
    request: (method: string, pathname: string, options: { key?: string; body?: unknown } = {}) =>
      checkedFetch(`${baseUrl}${pathname}`, {
        method,
        headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(options.body),
      }),
    kill: () => apiProcess.kill(),
  };
}

describe('accepted leads survive their dependencies going away', () => {
  it('PostgreSQL unreachable from the worker mid-ladder: activities retry and every lead finishes, one call per attempt', async () => {
    const temporal = await useTemporalClient();
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const workerUrl = new URL(url);
    workerUrl.port = String(proxy.port);
    const workerDb = createDatabase(workerUrl.toString());
    atTestEnd(() => workerDb.$disconnect());
    const api = await startTestApi({ db, url, temporal });
    await startTestWorker(temporal.taskQueue, {
      db: workerDb,
      ...carrierDependencies(await startTestCarrier(db), api),
    });

    const { campaignId, keys } = await busyLeads(api, 10);
    while ((await db.call.count({ where: { campaignId } })) < 10) await sleep(50);
    await proxy.cut();
    await sleep(3_000);
    await proxy.restore();
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaignId, key)));
    expect(results.every((result) => result.attempts === 3 && result.outcome === 'busy')).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10);
  }, 90_000);

  it('the API process killed right after answering, before it could start any workflow: a restarted API starts and dials every lead', async () => {
    const temporal = await useTemporalClient();
    // The carrier's status events go to an API of this process (the spawned ones share its database and Temporal).
    const events = await startTestApi({ db, url, temporal });
    await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), events) });
    // The first process reaches no Temporal server: the leads it answers for exist only as rows.
    const first = await spawnApi(`127.0.0.1:${await freePort()}`, temporal.taskQueue);
    const { campaignId, keys } = await busyLeads(first, 10);
    await first.kill();
    expect(await db.lead.count({ where: { campaignId, workflowStartedAt: null } })).toBe(10);

    const second = await spawnApi(inject('stack').temporalAddress, temporal.taskQueue);
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaignId, key)));
    await second.kill();
    expect(results.every((result) => result.attempts === 3)).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10);
  }, 90_000);

  it('the Temporal server killed and restarted mid-ladder: every lead finishes from its persisted history', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-restart-'));
    atTestEnd(() => rmSync(dataDir, { recursive: true, force: true }));
    // The same kind of server the suites run on (the dev server, or the cluster under `npm run test:cluster`).
    const server = await ownTemporalServer(inject('stack').temporal, dataDir);
    const temporal = await useTemporalClient(undefined, server.address);
    const api = await startTestApi({ db, url, temporal });
    const worker = await startTestWorker(
      temporal.taskQueue,
      { db, ...carrierDependencies(await startTestCarrier(db), api) },
      server.address,
    );
    // The worker before its server: left polling a stopped server, it went on retrying in this process.
    atTestEnd(async () => {
      await worker.stop();
      await server.stop();
    });

    const { campaignId, keys } = await busyLeads(api, 10);
    while ((await db.call.count({ where: { campaignId } })) < 10) await sleep(50);
    await server.kill();
    await server.restart();
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaignId, key)));
    expect(results.every((result) => result.attempts === 3)).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10);
  }, 180_000);

  it('PostgreSQL crashed right after answering (immediate shutdown, no checkpoint) and restarted: every accepted lead is dialed, one call per attempt', async () => {
    // A cluster of this test's own, crash-safe as in production (the shared test cluster runs with fsync off).
    const workDir = mkdtempSync(path.join(os.tmpdir(), 'postgres-crash-'));
    chmodSync(workDir, 0o711);
    const options = {
      binDir: process.env.PG_BIN_DIR!,
      dataDir: path.join(workDir, 'cluster'),
      port: await freePort(),
      durable: true,
      quiet: true,
    };
    let postgres = await startEmbeddedPostgres(options);
    atTestEnd(async () => {
      await postgres.stop();
      rmSync(workDir, { recursive: true, force: true });
    });
    await ensureDatabase(postgres.urlFor('postgres'), 'app');
    const crashUrl = postgres.urlFor('app');
    // The schema copied from the file's database (cloned from the migrated template): PostgreSQL's own tools take a
    // fraction of a second, Prisma's migrate deploy seconds of CPU to load its engine and replay every migration.
    const schemaFile = path.join(workDir, 'schema.sql');
    await execTestProcess(path.join(options.binDir, 'pg_dump'), ['--schema-only', '--no-owner', '-f', schemaFile, url]);
    await execTestProcess(path.join(options.binDir, 'psql'), [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-f',
      schemaFile,
      crashUrl,
    ]);
    const crashDb = createDatabase(crashUrl);
    atTestEnd(() => crashDb.$disconnect());
    const store: LeadStore = { db: crashDb, owner: await createTestWorkspace(crashDb, { scopes: ['campaigns.edit'] }) };
    const temporal = await useTemporalClient();
    const api = await startTestApi({ db: crashDb, url: crashUrl, temporal, sweepLeads: { staleAfterMs: 1_000 } });
    await startTestWorker(temporal.taskQueue, {
      db: crashDb,
      ...carrierDependencies(await startTestCarrier(crashDb), api),
    });

    const { campaignId, keys } = await busyLeads(api, 10, store);
    // SIGQUIT is PostgreSQL's immediate shutdown: every process quits at once, recovery replays the WAL.
    await postgres.process.stop('SIGQUIT');
    await sleep(2_000);
    postgres = await startEmbeddedPostgres(options);
    const results = await Promise.all(keys.map((key) => leadResult(temporal.client, campaignId, key)));
    expect(results.every((result) => result.attempts === 3 && result.outcome === 'busy')).toBe(true);
    await expectEveryAttemptOnce(campaignId, 10, store);
  }, 150_000);
});
