// `npm run bench:journeys`: journey runs on real servers started for the run (as in the tests), the
// production worker in its own process. Writes bench/results/journeys.json and .md.
//  1. Baseline: a bare no-op workflow, started (concurrency 20) and completed, on the same server.
//  2. A 5-node journey (start, set_variable, branch, webhook to a loopback receiver, end): runs started
//     per second and completed per second, measured the same way in the same run.
//  3. SLEEPERS runs waiting on a one-hour timer: the worker's memory once all of them wait, per cached run,
//     for two bundles, each on a fresh worker and task queue: the baseline gives every run its own copy of
//     every module the workflows import (as before worker/shared-workflow-modules.ts), the production
//     bundle shares the pure ones. BENCH_HEAP_SNAPSHOT_DIR=<dir>: the production bundle's worker runs its
//     workflows on its main thread (TEMPORAL_DEBUG) and writes a heap snapshot there once its runs wait
//     (summed by type with `tsx bench/heap-summary.ts <file> 40 <runs>`; a baseline's is 4 times larger).
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { publishJourney, saveJourney } from '../api/journeys/journeys';
import { createDatabase } from '../lib/database';
import type { JourneyDefinition } from '../lib/journeys';
import { journeyRunWorkflowId } from '../lib/temporal/workflow-ids';
import { createWorkspace } from '../lib/door/workspace-admin';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { projectRoot } from '../scripts/stack/paths';
import { ensureDatabase } from '../scripts/stack/postgres';
import { journey } from '../test/support/journeys';
import { measure } from './measure';
import { nodeArgsFromEnv, startBenchWorker, type BenchProcess } from './bench-process';
import { SHARED_WORKFLOW_MODULES } from '../worker/shared-workflow-modules';
import { writeBenchResults } from './results-files';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const SLEEPERS = Number(process.env.BENCH_SLEEPERS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const HEAP_SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOT_DIR;
/**
 * The baseline bundle's cache: what the default was while a run held 3.4 MB (4 MB per run under Node's
 * 4 GB heap). Today's default (1 MB per run) would run that bundle's workflow thread out of heap.
 */
const BASELINE_CACHED_WORKFLOWS = process.env.BENCH_BASELINE_CACHED_WORKFLOWS ?? '986';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const receiver = http.createServer((req, res) =>
  req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')),
);
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const { stack, stop } = await startTestStack();
try {
  await ensureDatabase(stack.postgresAdminUrl, 'bench', stack.templateDatabase);
  const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, '/bench');
  const db = createDatabase(databaseUrl, { poolSize: 10 });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  const taskQueue = `bench-${randomUUID()}`;
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { features: ['workflows'] });
  const publish = async (name: string, definition: JourneyDefinition) =>
    publishJourney(db, workspaceId, (await saveJourney(db, workspaceId, { name, definition })).id);
  const fiveNodes = await publish(
    'Five nodes',
    journey(
      [
        { id: 'start', type: 'start' },
        { id: 'tag', type: 'set_variable', data: { value: 'bench' } },
        {
          id: 'route',
          type: 'branch',
          data: {
            rules: [{ handle: 'tagged', when: { variable: 'tag.value', operator: 'equals', value: 'bench' } }],
            defaultHandle: 'other',
          },
        },
        { id: 'hook', type: 'webhook', data: { url: hookUrl } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'tag'],
        ['tag', 'route'],
        ['route', 'hook', 'tagged'],
        ['route', 'hook', 'other'],
        ['hook', 'done'],
      ],
    ),
  );
  const sleeper = await publish(
    'Sleeper',
    journey(
      [
        { id: 'start', type: 'start' },
        { id: 'nap', type: 'wait', data: { seconds: 3600 } },
        { id: 'done', type: 'end' },
      ],
      [
        ['start', 'nap'],
        ['nap', 'done'],
      ],
    ),
  );

  /** Rows of runs started by hand (no lead, no campaign), as POST /workflows/{id}/runs makes them. */
  const runRows = async (journeyId: string, count: number) => {
    const ids = Array.from({ length: count }, () => randomUUID());
    await db.journeyRun.createMany({
      data: ids.map((id) => ({
        id,
        workspaceId,
        journeyId,
        revision: 1,
        temporalWorkflowId: journeyRunWorkflowId(id),
        trigger: { phone: null, name: null, fields: {} },
        startedBy: 'bench',
      })),
    });
    return ids;
  };

  /** bench/workflows.ts bundled to a file, with `preloadModules` shared by every run (or none). */
  const bundleTo = async (preloadModules: readonly string[]) => {
    const bundlePath = path.join(os.tmpdir(), `bench-bundle-${randomUUID()}.js`);
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.join(projectRoot, 'bench/workflows.ts'),
      preloadModules: [...preloadModules],
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    });
    writeFileSync(bundlePath, code);
    return bundlePath;
  };
  const bundlePath = await bundleTo(SHARED_WORKFLOW_MODULES);
  const perRunModulesBundlePath = await bundleTo([]);
  const worker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: bundlePath,
  });
  await sleep(4_000);

  /** Completed executions of a workflow type on this run's task queue, from Temporal's visibility. */
  const completed = async (workflowType: string) =>
    (
      await client.workflow.count(
        `WorkflowType = "${workflowType}" AND TaskQueue = "${taskQueue}" AND ExecutionStatus = "Completed"`,
      )
    ).count;

  /**
   * Starts `count` workflows (concurrency CONCURRENCY) and waits until all have completed. Completion
   * is counted, not awaited per workflow: thousands of result long-polls exceed the server's poller limit.
   */
  const startAndComplete = async (workflowType: string, count: number, start: (index: number) => Promise<unknown>) => {
    const before = await completed(workflowType);
    const began = performance.now();
    const started = await measure(count, CONCURRENCY, async (index) => {
      await start(index);
    });
    while ((await completed(workflowType)) - before < count) await sleep(250);
    const seconds = (performance.now() - began) / 1000;
    return {
      started,
      completedPerSecond: Math.round(count / seconds),
      firstStartToLastCompletionSeconds: Number(seconds.toFixed(1)),
    };
  };

  const bare = await startAndComplete('benchNoopWorkflow', RUNS, () =>
    client.workflow.start('benchNoopWorkflow', { workflowId: `noop-${randomUUID()}`, taskQueue }),
  );
  console.error('bare no-op', bare);
  const fiveIds = await runRows(fiveNodes.id, RUNS);
  const journeys = await startAndComplete('journeyRunWorkflow', RUNS, (index) =>
    client.workflow.start('journeyRunWorkflow', {
      workflowId: journeyRunWorkflowId(fiveIds[index]!),
      taskQueue,
      args: [{ runId: fiveIds[index] }],
    }),
  );
  console.error('five-node journeys', journeys);

  worker.stop();

  const waitingOn = async (queue: string) =>
    (
      await client.workflow.count(
        `WorkflowType = "journeyRunWorkflow" AND TaskQueue = "${queue}" AND JourneyNodeId = "nap" AND ExecutionStatus = "Running"`,
      )
    ).count;
  /**
   * Writes a heap snapshot of `measured` (started with --heapsnapshot-signal) and waits until it is
   * complete. SIGWINCH: the Temporal runtime shuts the worker down on SIGUSR2, node's usual choice.
   */
  const heapSnapshot = async (measured: BenchProcess, dir: string) => {
    const snapshots = () => readdirSync(dir).filter((file) => file.endsWith('.heapsnapshot'));
    const before = snapshots().length;
    process.kill(measured.pid, 'SIGWINCH');
    while (snapshots().length === before) await sleep(1_000);
    // Written on the main thread once the heap is walked (the file stays empty until then): complete
    // once it has stopped growing.
    const file = path.join(dir, snapshots().sort().at(-1)!);
    for (let size = 0; ;) {
      await sleep(10_000);
      const now = statSync(file).size;
      if (now > 0 && now === size) return file;
      size = now;
    }
  };
  /** SLEEPERS runs waiting on a one-hour timer on a fresh worker running `bundle`: its memory before and once all wait. */
  const sleepersOn = async (bundle: string, env: Record<string, string>, snapshotDir?: string) => {
    const queue = `bench-${randomUUID()}`;
    const sleepingWorker = startBenchWorker(
      { databaseUrl, temporalAddress: stack.temporalAddress, taskQueue: queue, bundlePath: bundle },
      { ...env, ...(snapshotDir && { TEMPORAL_DEBUG: '1' }) },
      [
        ...nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS'),
        ...(snapshotDir ? ['--heapsnapshot-signal=SIGWINCH', `--diagnostic-dir=${snapshotDir}`] : []),
      ],
    );
    await sleepingWorker.printed('worker polling');
    await sleep(2_000);
    const cachedWorkflows = Number(/cached workflows: (\d+)/.exec(sleepingWorker.output())![1]);
    const sleeperIds = await runRows(sleeper.id, SLEEPERS);
    const before = sleepingWorker.memory();
    const started = await measure(SLEEPERS, CONCURRENCY, async (index) => {
      await client.workflow.start('journeyRunWorkflow', {
        workflowId: journeyRunWorkflowId(sleeperIds[index]!),
        taskQueue: queue,
        args: [{ runId: sleeperIds[index] }],
      });
    });
    while ((await waitingOn(queue)) < SLEEPERS) await sleep(2_000);
    await sleep(5_000);
    const waiting = sleepingWorker.memory();
    const snapshot = snapshotDir ? await heapSnapshot(sleepingWorker, snapshotDir) : undefined;
    sleepingWorker.stop();
    const cached = Math.min(SLEEPERS, cachedWorkflows);
    const figures = {
      runs: SLEEPERS,
      cachedWorkflows,
      startedPerSecond: started.perSecond,
      workerRssBeforeMb: before.rssMb,
      workerRssWaitingMb: waiting.rssMb,
      workerPeakRssMb: waiting.peakRssMb,
      kbPerCachedRun: Math.round(((waiting.rssMb - before.rssMb) * 1024) / cached),
      ...(snapshot && { heapSnapshot: snapshot }),
    };
    console.error('sleepers', figures);
    return figures;
  };
  const perRunModules = await sleepersOn(perRunModulesBundlePath, {
    WORKER_MAX_CACHED_WORKFLOWS: BASELINE_CACHED_WORKFLOWS,
  });
  const sharedModules = await sleepersOn(bundlePath, {}, HEAP_SNAPSHOT_DIR);

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    bareNoopWorkflow: bare,
    fiveNodeJourney: {
      ...journeys,
      startedOfBare: Number((journeys.started.perSecond / bare.started.perSecond).toFixed(3)),
      completedOfBare: Number((journeys.completedPerSecond / bare.completedPerSecond).toFixed(3)),
    },
    sleepers: { perRunModules, sharedModules },
  };
  const sleeperRow = (label: string, figures: typeof sharedModules) =>
    `| ${label} | ${figures.runs} | ${figures.cachedWorkflows} | ${figures.workerRssBeforeMb} | ${figures.workerRssWaitingMb} | ${figures.workerPeakRssMb} | ${figures.kbPerCachedRun} | ${figures.startedPerSecond} |`;
  writeBenchResults('journeys', result, [
    `# Journey runs benchmark (${result.measuredAt})`,
    '',
    `${os.cpus().length} CPUs shared by PostgreSQL, the Temporal dev server, the worker (own process) and the load; concurrency ${CONCURRENCY}.`,
    '',
    '| workflow | runs | started per second | start p50 ms | start p99 ms | completed per second |',
    '|-|-|-|-|-|-|',
    `| bare no-op workflow | ${RUNS} | ${bare.started.perSecond} | ${bare.started.p50Ms} | ${bare.started.p99Ms} | ${bare.completedPerSecond} |`,
    `| 5-node journey | ${RUNS} | ${journeys.started.perSecond} | ${journeys.started.p50Ms} | ${journeys.started.p99Ms} | ${journeys.completedPerSecond} |`,
    '',
    `- The journey starts at ${(result.fiveNodeJourney.startedOfBare * 100).toFixed(0)} % and completes at ${(result.fiveNodeJourney.completedOfBare * 100).toFixed(0)} % of the bare workflow's rate (it runs 3 activities: load the run, the webhook, record the end).`,
    '',
    `Journey runs waiting on a one-hour timer, each bundle on a fresh worker: the production bundle with the default cache (as many runs as fit the heap limit, worker/workflow-cache-size.ts), the baseline with ${BASELINE_CACHED_WORKFLOWS} (the default while a run held 3.4 MB). Per cached run: the RSS growth over the runs the cache holds.`,
    '',
    '| bundle | runs | cached | worker RSS before MB | RSS all waiting MB | peak RSS MB | KB per cached run | started per second |',
    '|-|-|-|-|-|-|-|-|',
    sleeperRow('each run evaluates every module (baseline)', perRunModules),
    sleeperRow('pure lib modules shared (worker/shared-workflow-modules.ts)', sharedModules),
    '',
  ]);
  console.log(JSON.stringify(result));
  await connection.close();
  await db.$disconnect();
} finally {
  receiver.close();
  await stop();
}
process.exit(0);
