// `npm run bench:leads`: lead intake and the dial ladder at volume, on real servers started for the run
// (as in the tests). Writes bench/results/leads.json and bench/results/leads.md.
//  1. Raw start rate: a bare Temporal client starting workflows on the same server (no worker busy).
//  2. The API: single pushes and batches of 100, with p50/p99 latency (no worker busy either).
//  3. LADDER_LEADS leads pushed in batches and run through a three-rung ladder (busy numbers, 1 s rungs)
//     by the production worker in its own process: time from first push to last result, peak memory.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createJsonPoster } from './http-post';
import { cpuSecondsBetween, cpuSecondsByProcess, measure } from './measure';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { ensureDatabase } from '../scripts/stack/postgres';
import { freePort } from '../scripts/stack/child-process';
import { apiHealthy, nodeArgsFromEnv, startBenchProcess, startBenchWorker, type BenchProcess } from './bench-process';
import { createLadderCampaign, pushBusyLeads } from './ladder-campaign';
import { writeBenchResults } from './results-files';

const STARTS = Number(process.env.BENCH_STARTS ?? 2000);
const PUSHES = Number(process.env.BENCH_PUSHES ?? 2000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 30);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const LADDER_LEADS = Number(process.env.BENCH_LADDER_LEADS ?? 10_000);

const { stack, stop } = await startTestStack();
try {
  await ensureDatabase(stack.postgresAdminUrl, 'bench', stack.templateDatabase);
  const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, '/bench');
  const db = createDatabase(databaseUrl, { poolSize: 20 });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const taskQueue = `bench-${randomUUID()}`;

  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['campaigns.edit'],
  });
  const newCampaign = (status: 'DRAFT' | 'RUNNING') => createLadderCampaign(db, workspaceId, status);

  const everyLeadStarted = async (campaignId: string) => {
    while (await db.lead.count({ where: { campaignId, workflowStartedAt: null } }))
      await new Promise((resolve) => setTimeout(resolve, 20));
  };
  /** The production API in its own process, as deployed; intake measurements go to a task queue no worker polls. */
  const apis: BenchProcess[] = [];
  const startApi = async (queue: string) => {
    const port = await freePort();
    apis.push(
      startBenchProcess(
        'api/main.ts',
        {
          DATABASE_URL: databaseUrl,
          TEMPORAL_ADDRESS: stack.temporalAddress,
          TEMPORAL_TASK_QUEUE: queue,
          PORT: String(port),
          EXPORT_DIR: path.join(os.tmpdir(), 'bench-exports'),
        },
        nodeArgsFromEnv('BENCH_API_NODE_ARGS'),
      ),
    );
    const apiUrl = `http://127.0.0.1:${port}`;
    await apiHealthy(apiUrl);
    const client = createJsonPoster(apiUrl, { authorization: `Bearer ${key}` }, CONCURRENCY);
    return async (pathname: string, body: unknown, expected: number) => {
      const response = await client.post(pathname, body);
      if (response.status !== expected) throw new Error(`${pathname}: ${response.status} ${response.text}`);
    };
  };
  let post = await startApi(`${taskQueue}-intake`);

  // 1 and 2: no worker polls the intake campaign's queue, so only the starts are measured.
  const cpuNow = () =>
    cpuSecondsByProcess(
      (dir) => readdirSync(dir),
      (file) => readFileSync(file, 'utf8'),
    );
  const groupOf = (pid: number, name: string) =>
    pid === process.pid
      ? 'load generator'
      : apis.some((api) => api.pid === pid)
        ? 'API'
        : ['temporal', 'postgres'].includes(name)
          ? name
          : 'other';
  const cpuPerOperation = (before: ReturnType<typeof cpuNow>, operations: number) =>
    Object.fromEntries(
      Object.entries(cpuSecondsBetween(before, cpuNow(), groupOf)).map(([group, seconds]) => [
        group,
        Number(((seconds * 1000) / operations).toFixed(2)),
      ]),
    );
  const rawCpu = cpuNow();
  const raw = await measure(STARTS, CONCURRENCY, async () => {
    await temporal.workflow.start('benchNothing', { workflowId: `raw-${randomUUID()}`, taskQueue: `${taskQueue}-raw` });
  });
  const rawCpuMsPerStart = cpuPerOperation(rawCpu, STARTS);
  console.error('raw starts', raw, rawCpuMsPerStart);
  const intake = await newCampaign('RUNNING');
  const intakeStarted = performance.now();
  const singleCpu = cpuNow();
  const single = await measure(PUSHES, CONCURRENCY, async () => {
    await post(
      `/v1/campaigns/${intake.id}/leads`,
      { lead: { phone: '+14155550125' }, idempotencyKey: randomUUID() },
      202,
    );
  });
  // The pushes answer once their rows are stored; the sustained rate counts until every workflow is started.
  await everyLeadStarted(intake.id);
  const singleStartedPerSecond = Math.round(PUSHES / ((performance.now() - intakeStarted) / 1000));
  const singleCpuMsPerPush = cpuPerOperation(singleCpu, PUSHES);
  console.error('single pushes', single, { singleStartedPerSecond }, singleCpuMsPerPush);
  const batch = await measure(BATCHES, 1, async () => {
    await post(
      `/v1/campaigns/${intake.id}/leads/batch`,
      { leads: Array.from({ length: 100 }, () => ({ lead: { phone: '+14155550125' }, idempotencyKey: randomUUID() })) },
      200,
    );
  });
  console.error('batches of 100', batch);
  // The answers wait only for the rows; the workflows are started from them right after (the outbox).
  await everyLeadStarted(intake.id);
  const intakeLeads = PUSHES + BATCHES * 100;
  const intakeSeconds = (performance.now() - intakeStarted) / 1000;
  const dispatched = {
    leads: intakeLeads,
    firstPushToLastWorkflowStartedSeconds: Number(intakeSeconds.toFixed(1)),
    workflowsStartedPerSecond: Math.round(intakeLeads / intakeSeconds),
  };
  console.error('dispatched', dispatched);
  // Every API process sweeps every undispatched lead onto its own task queue: the intake API must not
  // take the ladder's leads onto the queue no worker polls.
  apis[0]!.stop();
  post = await startApi(taskQueue);

  // 3: the production worker, in its own process, drains a three-rung ladder.
  const worker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: stack.workflowBundlePath,
  });
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  const ladderCampaign = await newCampaign('RUNNING');
  const firstPush = performance.now();
  await pushBusyLeads(post, ladderCampaign.id, LADDER_LEADS, randomUUID);
  const pushSeconds = (performance.now() - firstPush) / 1000;
  let finished = 0;
  let reportedAt = 0;
  while (finished < LADDER_LEADS) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    finished = await db.lead.count({
      where: { campaignId: ladderCampaign.id, status: { in: ['completed', 'failed', 'cancelled'] } },
    });
    const seconds = Math.round((performance.now() - firstPush) / 1000);
    if (seconds - reportedAt >= 30) {
      reportedAt = seconds;
      console.error(
        `ladder: ${seconds} s, ${finished} of ${LADDER_LEADS} leads finished, worker ${JSON.stringify(worker.memory())}`,
      );
    }
  }
  const drainSeconds = (performance.now() - firstPush) / 1000;
  const { peakRssMb, rssMb: endRssMb } = worker.memory();
  const workerNodeArgs = worker.nodeArgs.join(' ');
  worker.stop();
  const calls = await db.call.count({ where: { campaignId: ladderCampaign.id } });

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    rawStarts: { ...raw, cpuMsPerStart: rawCpuMsPerStart },
    singlePush: {
      ...single,
      keptOfRawStartRate: Number((single.perSecond / raw.perSecond).toFixed(3)),
      workflowsStartedPerSecond: singleStartedPerSecond,
      startedKeptOfRawStartRate: Number((singleStartedPerSecond / raw.perSecond).toFixed(3)),
      cpuMsPerPush: singleCpuMsPerPush,
    },
    batchOf100: { ...batch, leadsPerSecond: Math.round(batch.perSecond * 100) },
    dispatched,
    ladder: {
      leads: LADDER_LEADS,
      rungs: 3,
      calls,
      pushSeconds: Number(pushSeconds.toFixed(1)),
      firstPushToLastResultSeconds: Number(drainSeconds.toFixed(1)),
      workerPeakRssMb: peakRssMb,
      workerRssAtLastResultMb: endRssMb,
      workerNodeArgs,
    },
    goals: { keptOfRawStartRateAtLeast: 0.7, batchOf100P50UnderMs: 150 },
  };
  writeBenchResults('leads', result, [
    `# Lead intake and ladder benchmark (${result.measuredAt})`,
    '',
    `${os.cpus().length} CPUs shared by PostgreSQL, the Temporal dev server, the API, the worker and the load; concurrency ${CONCURRENCY}.`,
    '',
    '| measure | count | per second | p50 ms | p99 ms |',
    '|-|-|-|-|-|',
    `| bare Temporal client starts | ${raw.count} | ${raw.perSecond} | ${raw.p50Ms} | ${raw.p99Ms} |`,
    `| POST /v1/campaigns/{id}/leads | ${single.count} | ${single.perSecond} | ${single.p50Ms} | ${single.p99Ms} |`,
    `| POST …/leads/batch (100 leads) | ${batch.count} | ${batch.perSecond} (${result.batchOf100.leadsPerSecond} leads/s) | ${batch.p50Ms} | ${batch.p99Ms} |`,
    '',
    `- Single push keeps ${(result.singlePush.keptOfRawStartRate * 100).toFixed(1)} % of the raw start rate (goal >= 70 %): pushes answered per second, each answer after its lead is stored.`,
    `- Counted until the last of those leads had its workflow started (the outbox starts them right after the answers): ${singleStartedPerSecond} per second, ${(result.singlePush.startedKeptOfRawStartRate * 100).toFixed(1)} % of the raw start rate.`,
    `- CPU ms per raw start: ${JSON.stringify(rawCpuMsPerStart)}; per single push, including its workflow start: ${JSON.stringify(singleCpuMsPerPush)}.`,
    `- Every one of the ${intakeLeads} leads above had its workflow started ${dispatched.firstPushToLastWorkflowStartedSeconds} s after the first push (${dispatched.workflowsStartedPerSecond} workflows started per second, while the pushes ran).`,
    `- A batch of 100 answers in ${batch.p50Ms} ms at p50 (goal < 150 ms).`,
    LADDER_LEADS
      ? `- ${LADDER_LEADS} leads through a three-rung ladder (busy numbers, 1 s rungs, ${calls} calls): pushed in ${result.ladder.pushSeconds} s, last result ${result.ladder.firstPushToLastResultSeconds} s after the first push; worker peak RSS ${peakRssMb} MB, ${endRssMb} MB at the last result (worker node flags: ${workerNodeArgs || 'none'}).`
      : '- Ladder part not run in this measurement (BENCH_LADDER_LEADS=0).',
    '',
  ]);
  console.log(JSON.stringify(result));
  for (const api of apis) api.stop();
  await db.$disconnect();
  await connection.close();
} finally {
  await stop();
}
process.exit(0);
