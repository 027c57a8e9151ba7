// `npm run bench:scale`: the lead intake and the three-rung ladder on every Temporal server the project runs, with
// one worker and with two, in one run on one machine. Writes bench/results/scale.{json,md}.
//
// Servers, each started fresh for its runs: the CLI's dev server in memory (what the tests use; one history
// shard), and the production-shaped cluster (`npm run start:cluster`: the real server, persistence and visibility
// on a PostgreSQL of its own with fsync on) with 1, 4 and 16 history shards. For each server and worker count:
//  - intake: BENCH_SCALE_PUSHES single pushes (POST /v1/campaigns/{id}/leads, 20 in flight) through an API whose
//    task queue no worker polls, timed until every lead's workflow is started (the outbox starts them after the
//    answers);
//  - ladder: BENCH_SCALE_LEADS busy leads pushed in batches of 100 and run through three 1 s rungs on the
//    asynchronous carrier path (the simulated carrier process, signed events to the API, a busy call busy 1 s
//    after its dial), timed from the first push to the last result.
// Both report CPU per lead per process group, from /proc, with the machine's busy share over the interval:
// that is what shows where the bound is.
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createJsonPoster } from './http-post';
import { cpuSecondsBetween, cpuSecondsByProcess, descendsFrom, measure, type ProcessCpu } from './measure';
import { apiHealthy, nodeArgsFromEnv, startBenchCarrier, startBenchProcess, type BenchProcess } from './bench-process';
import { BUSY_PHONE, createLadderCampaign, pushBusyLeads } from './ladder-campaign';
import { benchMachine, writeBenchResults } from './results-files';
import { scaleReport, type ScaleResult } from './scale-report';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { freePort } from '../scripts/stack/child-process';
import { migrateDeploy } from '../scripts/stack/migrate';
import { ensureDatabase, startEmbeddedPostgres } from '../scripts/stack/postgres';
import { requiredPath, startClusterIn, startDevServer } from '../scripts/stack/test-temporal';
import { buildWorkflowBundle } from '../worker/bundle-workflows';

const LEADS = Number(process.env.BENCH_SCALE_LEADS ?? 10_000);
const PUSHES = Number(process.env.BENCH_SCALE_PUSHES ?? 2_000);
const SHARDS = (process.env.BENCH_SCALE_SHARDS ?? '1,4,16').split(',').filter(Boolean).map(Number);
const WORKERS = (process.env.BENCH_SCALE_WORKERS ?? '1,2').split(',').map(Number);
/** BENCH_SCALE_DEV_SERVER=0 leaves the dev server out (a run of the cluster alone). */
const WITH_DEV_SERVER = process.env.BENCH_SCALE_DEV_SERVER !== '0';
/** The results' file name under bench/results/ (a partial run kept beside the full one). */
const RESULTS_NAME = process.env.BENCH_SCALE_RESULTS ?? 'scale';
const CONCURRENCY = 20;
/** A busy call's timeline is queued 0 s, ringing 1 s, busy 3 s (simulators/simulated-carrier/timeline.ts). */
const TIME_SCALE = 1 / 3;
const SIGNING_SECRET = `bench-${randomUUID()}`;
/** Each process's metrics endpoints on ports of their own: two workers on one machine must not collide. */
const OWN_METRICS_PORTS = { METRICS_PORT: '0', WORKER_METRICS_PORT: '0', WORKER_SDK_METRICS_PORT: '0' };

const cpuNow = () =>
  cpuSecondsByProcess(
    (dir) => readdirSync(dir),
    (file) => readFileSync(file, 'utf8'),
  );
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-'));
chmodSync(workDir, 0o711);
// Both PostgreSQL clusters are crash-safe (fsync on), as deployed.
const crashSafePostgres = async (dir: string) =>
  startEmbeddedPostgres({
    binDir: requiredPath('PG_BIN_DIR'),
    dataDir: path.join(workDir, dir),
    port: await freePort(),
    durable: true,
    quiet: true,
  });
const [appPostgres, temporalPostgres] = await Promise.all([
  crashSafePostgres('app-postgres'),
  crashSafePostgres('temporal-postgres'),
]);
const started: BenchProcess[] = [];
process.once('exit', () => started.forEach((running) => running.stop()));

interface ServerUnderTest {
  name: string;
  start(): Promise<{ address: string; pid: number; stop(): Promise<void> }>;
}
const devServer = (): ServerUnderTest => ({
  name: 'dev server (in memory, 1 shard)',
  start: async () => {
    const server = await startDevServer();
    return { address: server.address, pid: server.process.child.pid!, stop: () => server.stop() };
  },
});
const servers: ServerUnderTest[] = [
  ...(WITH_DEV_SERVER ? [devServer()] : []),
  ...SHARDS.map((historyShards) => ({
    name: `cluster, ${historyShards} shard${historyShards === 1 ? '' : 's'}`,
    start: async () => {
      const cluster = await startClusterIn(
        temporalPostgres.urlFor('postgres'),
        path.join(workDir, `cluster-${historyShards}`),
        historyShards,
        String(historyShards),
      );
      return { address: cluster.address, pid: cluster.process.child.pid!, stop: () => cluster.stop() };
    },
  })),
];

/** Names the process group a pid belongs to: the measured processes, the servers (with their children). */
function grouper(roles: Record<string, number[]>, temporalPid: number) {
  return (snapshot: Map<number, ProcessCpu>) => (pid: number) => {
    if (pid === process.pid) return 'load generator';
    for (const [role, pids] of Object.entries(roles)) if (pids.includes(pid)) return role;
    const under = (ancestor: number) => pid === ancestor || descendsFrom(snapshot, pid, ancestor);
    if (under(temporalPid)) return 'Temporal server';
    if (under(temporalPostgres.process.child.pid!)) return "Temporal's PostgreSQL";
    if (under(appPostgres.process.child.pid!)) return "app's PostgreSQL";
    return 'other';
  };
}

/** CPU ms per item of each group between `before` and now, the machine's busy share, and the load average. */
function cpuPer(before: Map<number, ProcessCpu>, items: number, seconds: number, group: ReturnType<typeof grouper>) {
  const after = cpuNow();
  const used = cpuSecondsBetween(before, after, group(after));
  const ourSeconds = Object.entries(used)
    .filter(([name]) => name !== 'other')
    .reduce((sum, [, value]) => sum + value, 0);
  return {
    cpuMsPerLead: Object.fromEntries(
      Object.entries(used).map(([name, value]) => [name, Number(((value * 1000) / items).toFixed(2))]),
    ),
    /** Our processes' CPU over the interval's wall time and all CPUs: near 100 % the machine is the bound. */
    busyShareOfCpus: Number((ourSeconds / (seconds * os.cpus().length)).toFixed(3)),
  };
}

async function runOne(server: ServerUnderTest, address: string, temporalPid: number, workers: number, index: number) {
  const database = `bench_scale_${index}`;
  await ensureDatabase(appPostgres.urlFor('postgres'), database, 'app_template');
  const databaseUrl = appPostgres.urlFor(database);
  const db = createDatabase(databaseUrl, { poolSize: 4 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['campaigns.edit'],
  });
  const taskQueue = `bench-scale-${randomUUID()}`;
  const { carrier, url: carrierUrl } = await startBenchCarrier(databaseUrl, SIGNING_SECRET, TIME_SCALE);
  started.push(carrier);
  const startApi = async (queue: string) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = startBenchProcess('api/main.ts', {
      ...OWN_METRICS_PORTS,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TASK_QUEUE: queue,
      PORT: String(port),
      EXPORT_DIR: path.join(workDir, 'exports'),
      SIMULATED_CARRIER_SIGNING_SECRET: SIGNING_SECRET,
    });
    started.push(api);
    await apiHealthy(url);
    const client = createJsonPoster(url, { authorization: `Bearer ${key}` }, CONCURRENCY);
    const post = async (pathname: string, body: unknown, expected: number) => {
      const response = await client.post(pathname, body);
      if (response.status !== expected) throw new Error(`${pathname}: ${response.status} ${response.text}`);
    };
    return { api, url, post, close: client.close };
  };

  // Intake: no worker polls this API's queue, so a lead costs its push and its workflow's start only.
  const intakeApi = await startApi(`${taskQueue}-intake`);
  const intakeCampaign = await createLadderCampaign(db, workspaceId, 'RUNNING');
  const intakeGroup = grouper({ API: [intakeApi.api.pid] }, temporalPid);
  const intakeCpu = cpuNow();
  const intakeStarted = performance.now();
  const pushes = await measure(PUSHES, CONCURRENCY, () =>
    intakeApi.post(
      `/v1/campaigns/${intakeCampaign.id}/leads`,
      { lead: { phone: BUSY_PHONE }, idempotencyKey: randomUUID() },
      202,
    ),
  );
  while (await db.lead.count({ where: { campaignId: intakeCampaign.id, workflowStartedAt: null } })) await sleep(20);
  const intakeSeconds = (performance.now() - intakeStarted) / 1000;
  const intake = {
    pushes: PUSHES,
    pushesAnsweredPerSecond: pushes.perSecond,
    pushP50Ms: pushes.p50Ms,
    pushP99Ms: pushes.p99Ms,
    workflowsStartedPerSecond: Math.round(PUSHES / intakeSeconds),
    ...cpuPer(intakeCpu, PUSHES, intakeSeconds, intakeGroup),
  };
  intakeApi.api.stop();
  intakeApi.close();
  console.error(`${server.name}, ${workers} worker(s), intake: ${JSON.stringify(intake)}`);

  // The ladder: the production worker(s), each its own process, on one task queue.
  const ladderApi = await startApi(taskQueue);
  const workerProcesses = Array.from({ length: workers }, () => {
    const worker = startBenchProcess(
      'worker/main.ts',
      {
        ...OWN_METRICS_PORTS,
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKFLOW_BUNDLE_PATH: bundlePath,
        SIMULATED_CARRIER_URL: carrierUrl,
        SIMULATED_CARRIER_SIGNING_SECRET: SIGNING_SECRET,
        TELEPHONY_CALLBACK_BASE_URL: ladderApi.url,
      },
      nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS'),
    );
    started.push(worker);
    return worker;
  });
  for (const worker of workerProcesses) await worker.printed('worker polling');
  const campaign = await createLadderCampaign(db, workspaceId, 'RUNNING');
  const ladderGroup = grouper(
    {
      API: [ladderApi.api.pid],
      workers: workerProcesses.map((worker) => worker.pid),
      'simulated carrier': [carrier.pid],
    },
    temporalPid,
  );
  const ladderCpu = cpuNow();
  const firstPush = performance.now();
  await pushBusyLeads(ladderApi.post, campaign.id, LEADS, randomUUID);
  const pushSeconds = (performance.now() - firstPush) / 1000;
  let finished = 0;
  let reportedAt = 0;
  while (finished < LEADS) {
    await sleep(1_000);
    finished = await db.lead.count({
      where: { campaignId: campaign.id, status: { in: ['completed', 'failed', 'cancelled'] } },
    });
    const seconds = Math.round((performance.now() - firstPush) / 1000);
    if (seconds - reportedAt >= 30) {
      reportedAt = seconds;
      console.error(`${server.name}, ${workers} worker(s): ${seconds} s, ${finished} of ${LEADS} leads finished`);
    }
  }
  const drainSeconds = (performance.now() - firstPush) / 1000;
  const calls = await db.call.count({ where: { campaignId: campaign.id } });
  const ladder = {
    leads: LEADS,
    calls,
    pushSeconds: Number(pushSeconds.toFixed(1)),
    firstPushToLastResultSeconds: Number(drainSeconds.toFixed(1)),
    leadsFinishedPerSecond: Number((LEADS / drainSeconds).toFixed(1)),
    workerPeakRssMb: Math.max(...workerProcesses.map((worker) => worker.memory().peakRssMb)),
    ...cpuPer(ladderCpu, LEADS, drainSeconds, ladderGroup),
  };
  console.error(`${server.name}, ${workers} worker(s), ladder: ${JSON.stringify(ladder)}`);
  for (const process of [...workerProcesses, ladderApi.api, carrier]) process.stop();
  ladderApi.close();
  await db.$disconnect();
  // The stopped processes let go of their ports and the CPU before the next run starts.
  await sleep(3_000);
  return { server: server.name, workers, intake, ladder };
}

let bundlePath = '';
try {
  await ensureDatabase(appPostgres.urlFor('postgres'), 'app_template');
  await migrateDeploy(appPostgres.urlFor('app_template'));
  bundlePath = await buildWorkflowBundle(path.join(workDir, 'workflow-bundle.js'));
  const results = [];
  let index = 0;
  for (const server of servers) {
    const running = await server.start();
    try {
      for (const workers of WORKERS) results.push(await runOne(server, running.address, running.pid, workers, index++));
    } finally {
      await running.stop();
    }
  }
  const result: ScaleResult = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      pushes: PUSHES,
      pushConcurrency: CONCURRENCY,
      leads: LEADS,
      rungs: 3,
      rungDelaySeconds: 1,
      busyCallSeconds: 3 * TIME_SCALE,
      maxConcurrentCalls: 1000,
    },
    ...(process.env.BENCH_NOTE && { note: process.env.BENCH_NOTE }),
    results,
  };
  writeBenchResults(RESULTS_NAME, result, scaleReport(result));
  console.log(JSON.stringify(result));
} finally {
  for (const running of started) running.stop();
  await Promise.allSettled([appPostgres.stop(), temporalPostgres.stop()]);
  rmSync(workDir, { recursive: true, force: true });
}
process.exit(0);
