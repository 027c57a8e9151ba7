// `npm run bench:leads`: lead intake and the dial ladder at volume, on real servers started for the run
// (as in the tests). Writes bench/results/leads.json and bench/results/leads.md.
//  1. Raw start rate: a bare Temporal client starting workflows on the same server (no worker busy).
//  2. The API: single pushes and batches of 100, with p50/p99 latency (no worker busy either).
//  3. LADDER_LEADS leads pushed in batches and run through a three-rung ladder (busy numbers, 1 s rungs)
//     by the production worker in its own process: time from first push to last result, peak memory.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app';
import { measure, memoryOf } from './measure';
import { createLeadDispatcher, type LeadDispatcher } from '../api/services/lead-dispatch';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { addMember, createApiKey, createWorkspace } from '../lib/workspace-admin';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { projectRoot } from '../scripts/stack/paths';
import { ensureDatabase } from '../scripts/stack/postgres';

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
  const sql = createSqlPool(databaseUrl, 20);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const taskQueue = `bench-${randomUUID()}`;

  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, { scopes: ['campaigns.edit'] });
  const alwaysOpen = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
  const ladder = { rungs: [{ delaySeconds: 0 }, { delaySeconds: 1 }, { delaySeconds: 1 }], outcomes: { answered: 'end', busy: 'next', no_answer: 'next', voicemail: 'next', failed: 'next', invalid_number: 'end' } };
  const newCampaign = (status: 'DRAFT' | 'RUNNING') =>
    db.campaign.create({ data: { workspaceId, name: 'Bench', acceptsLeadPush: true, status, dialLadder: ladder, callingWindow: alwaysOpen, maxConcurrentCalls: 1000 } });

  /** An API on its own port; intake measurements go to a task queue no worker polls. */
  const servers: Array<{ close(): unknown }> = [];
  const dispatchers: LeadDispatcher[] = [];
  const startApi = async (queue: string) => {
    const leadDispatcher = createLeadDispatcher({ sql, temporal, taskQueue: queue });
    leadDispatcher.startSweeping();
    dispatchers.push(leadDispatcher);
    const server = createApp({ db, sql, temporal, temporalConnection: connection, taskQueue: queue, leadDispatcher, defaultRateLimitPerMinute: 120,
      exports: { dir: path.join(os.tmpdir(), 'bench-exports'), inlineMaxRows: 5000, retentionSeconds: 86_400, pageRows: 5000 },
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    servers.push(server);
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return async (pathname: string, body: unknown, expected: number) => {
      const response = await fetch(`${apiUrl}${pathname}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (response.status !== expected) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
      return response;
    };
  };
  let post = await startApi(`${taskQueue}-intake`);

  // 1 and 2: no worker polls the intake campaign's queue, so only the starts are measured.
  const raw = await measure(STARTS, CONCURRENCY, async () => {
    await temporal.workflow.start('benchNothing', { workflowId: `raw-${randomUUID()}`, taskQueue: `${taskQueue}-raw` });
  });
  console.error('raw starts', raw);
  const intake = await newCampaign('RUNNING');
  const intakeStarted = performance.now();
  const single = await measure(PUSHES, CONCURRENCY, async () => {
    await post(`/v1/campaigns/${intake.id}/leads`, { lead: { phone: '+14155550125' }, idempotencyKey: randomUUID() }, 202);
  });
  console.error('single pushes', single);
  const batch = await measure(BATCHES, 1, async () => {
    await post(`/v1/campaigns/${intake.id}/leads/batch`, { leads: Array.from({ length: 100 }, () => ({ lead: { phone: '+14155550125' }, idempotencyKey: randomUUID() })) }, 200);
  });
  console.error('batches of 100', batch);
  // The answers wait only for the rows; the workflows are started from them right after (the outbox).
  while (await db.lead.count({ where: { campaignId: intake.id, workflowStartedAt: null } })) await new Promise((resolve) => setTimeout(resolve, 100));
  const intakeLeads = PUSHES + BATCHES * 100;
  const intakeSeconds = (performance.now() - intakeStarted) / 1000;
  const dispatched = { leads: intakeLeads, firstPushToLastWorkflowStartedSeconds: Number(intakeSeconds.toFixed(1)), workflowsStartedPerSecond: Math.round(intakeLeads / intakeSeconds) };
  console.error('dispatched', dispatched);
  post = await startApi(taskQueue);

  // 3: the production worker, in its own process, drains a three-rung ladder.
  const worker = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, WORKFLOW_BUNDLE_PATH: stack.workflowBundlePath, LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  const ladderCampaign = await newCampaign('RUNNING');
  const firstPush = performance.now();
  for (let offset = 0; offset < LADDER_LEADS; offset += 100) {
    const size = Math.min(100, LADDER_LEADS - offset);
    await post(`/v1/campaigns/${ladderCampaign.id}/leads/batch`, { leads: Array.from({ length: size }, () => ({ lead: { phone: '+14155550125' }, idempotencyKey: randomUUID() })) }, 200);
  }
  const pushSeconds = (performance.now() - firstPush) / 1000;
  let finished = 0;
  while (finished < LADDER_LEADS) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    finished = await db.lead.count({ where: { campaignId: ladderCampaign.id, status: { in: ['completed', 'failed', 'cancelled'] } } });
  }
  const drainSeconds = (performance.now() - firstPush) / 1000;
  const { peakRssMb } = memoryOf(worker.pid!, (file) => readFileSync(file, 'utf8'));
  worker.kill('SIGTERM');
  const calls = await db.call.count({ where: { campaignId: ladderCampaign.id } });

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    rawStarts: raw,
    singlePush: { ...single, keptOfRawStartRate: Number((single.perSecond / raw.perSecond).toFixed(3)) },
    batchOf100: { ...batch, leadsPerSecond: Math.round(batch.perSecond * 100) },
    dispatched,
    ladder: { leads: LADDER_LEADS, rungs: 3, calls, pushSeconds: Number(pushSeconds.toFixed(1)), firstPushToLastResultSeconds: Number(drainSeconds.toFixed(1)), workerPeakRssMb: peakRssMb },
    goals: { keptOfRawStartRateAtLeast: 0.7, batchOf100P50UnderMs: 150 },
  };
  const resultsDir = path.join(projectRoot, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'leads.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, 'leads.md'), [
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
    `- Single push keeps ${(result.singlePush.keptOfRawStartRate * 100).toFixed(1)} % of the raw start rate (goal >= 70 %).`,
    `- Every one of the ${intakeLeads} leads above had its workflow started ${dispatched.firstPushToLastWorkflowStartedSeconds} s after the first push (${dispatched.workflowsStartedPerSecond} workflows started per second, while the pushes ran).`,
    `- A batch of 100 answers in ${batch.p50Ms} ms at p50 (goal < 150 ms).`,
    LADDER_LEADS
      ? `- ${LADDER_LEADS} leads through a three-rung ladder (busy numbers, 1 s rungs, ${calls} calls): pushed in ${result.ladder.pushSeconds} s, last result ${result.ladder.firstPushToLastResultSeconds} s after the first push; worker peak RSS ${peakRssMb} MB.`
      : '- Ladder part not run in this measurement (BENCH_LADDER_LEADS=0).',
    '',
  ].join('\n'));
  console.log(JSON.stringify(result));
  for (const server of servers) server.close();
  await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
  await sql.end();
  await db.$disconnect();
  await connection.close();
} finally {
  await stop();
}
process.exit(0);
