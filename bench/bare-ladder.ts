// `npm run bench:bare-ladder` (add `--cluster` for the production-shaped cluster with BENCH_SHARDS history
// shards, default 16: `bash scripts/with-tools.sh --cluster tsx bench/bare-ladder.ts --cluster`).
// One-call leads, answered and brief, on two paths in one run on the same Temporal server, alternating rounds:
//  - bare: bench/bare-ladder/workflows.ts in a bundle of its own (one local-activity dial over HTTP to the
//    simulated carrier, one timer-bounded wait for a "call ended" signal), run by bench/bare-ladder/side.ts (the
//    worker and a tiny HTTP receiver: of batches of leads, whose workflows it starts, and of the carrier's events,
//    which signal the workflow), its leads pushed in batches of 100 as production's are;
//  - production: leads pushed through the API onto a RUNNING campaign with a line per lead
//    (bench/production-leads.ts), whatever workflow type the API starts for them.
// Per lead: CPU of each side's processes (and the Temporal server's, apart), history events, visibility writes
// (a start, each UpsertWorkflowSearchAttributes, a close) and workflow tasks, from the fetched histories of
// every workflow the round ran. Writes bench/results/bare-ladder.{json,md}.
import { median } from './alternating-rounds';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { nodeArgsFromEnv, startBenchCarrier, startBenchProcess, startBenchStack } from './bench-process';
import {
  BUSY_PHONE_NO_AFTERMATH,
  TIME_SCALE,
  cpuSecondsWithEndedBackends,
  groupOf,
  startProductionSide,
  threadCpuSeconds,
  waitForExit,
} from './production-leads';
import { cpuNow } from './measure';
import { historyFigures, type HistoryFigures } from './history-figures';
import { benchMachine, writeBenchResults } from './results-files';
import { ensureDatabase } from '../scripts/stack/postgres';
import { projectRoot } from '../scripts/stack/paths';
import { freePort } from '../scripts/stack/child-process';

const CLUSTER = process.argv.includes('--cluster');
const SHARDS = Number(process.env.BENCH_SHARDS ?? 16);
if (CLUSTER) {
  // scripts/stack/ephemeral-stack.ts starts the production-shaped cluster instead of the dev server.
  process.env.TEST_TEMPORAL = 'cluster';
  process.env.TEST_TEMPORAL_SHARDS = String(SHARDS);
}
const LEADS = Number(process.env.BENCH_LEADS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TARGETS = { cpuRatioAtMost: 1.3, historyEventsPerLeadAtMost: 37, visibilityWritesPerLead: 2 };

/** Every workflow the production round ran on its task queue (its leads' and any they started), by visibility. */
async function workflowsOnQueue(client: Client, taskQueue: string, since: Date): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({
    query: `TaskQueue = "${taskQueue}" AND StartTime >= "${since.toISOString()}"`,
  }))
    ids.push(execution.workflowId);
  return ids;
}

const perLead = (value: number) => Number((value / LEADS).toFixed(2));
const perLeadMs = (seconds: number) => Number(((seconds * 1000) / LEADS).toFixed(2));

const { stack, stop, databaseUrl } = await startBenchStack('bench_bare_ladder_production');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'bench-bare-ladder-'));
try {
  const clientConnection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection: clientConnection });
  // The bare side's carrier keeps its calls in a database of its own (the simulated carrier needs one).
  await ensureDatabase(stack.postgresAdminUrl, 'bench_bare_ladder_carrier', stack.templateDatabase);
  const bareCarrierDb = stack.postgresAdminUrl.replace(/\/postgres$/, '/bench_bare_ladder_carrier');
  const signingSecret = `bench-${randomUUID()}`;
  const bareCarrier = await startBenchCarrier(bareCarrierDb, signingSecret, TIME_SCALE);
  const bareBundlePath = path.join(scratch, 'bare-workflow-bundle.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(projectRoot, 'bench/bare-ladder/workflows.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  writeFileSync(bareBundlePath, code);
  const bareTaskQueue = `bench-bare-${randomUUID()}`;
  const barePort = await freePort();
  const bareSide = startBenchProcess(
    'bench/bare-ladder/side.ts',
    {
      BARE_PORT: String(barePort),
      TEMPORAL_ADDRESS: stack.temporalAddress,
      BARE_TASK_QUEUE: bareTaskQueue,
      BARE_BUNDLE_PATH: bareBundlePath,
      SIMULATED_CARRIER_URL: bareCarrier.url,
      SIMULATED_CARRIER_SIGNING_SECRET: signingSecret,
    },
    nodeArgsFromEnv('BENCH_BARE_NODE_ARGS'),
  );
  // A bench that fails leaves none of its processes behind.
  process.once('exit', () => [bareSide, bareCarrier.carrier].forEach((each) => each.stop()));
  await bareSide.printed('bare side polling');
  // A busy call on both sides: the same shape (one dial, one call-ended signal), and no call intelligence, which the
  // bare side has no counterpart of.
  const production = await startProductionSide({
    phone: BUSY_PHONE_NO_AFTERMATH,
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    bundlePath: stack.workflowBundlePath,
    scratchDir: scratch,
    workerNodeArgs: nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS'),
    apiNodeArgs: nodeArgsFromEnv('BENCH_API_NODE_ARGS'),
  });

  const runBare = async () => {
    const measured = { 'bare side (worker, receiver)': bareSide.pid, 'simulated carrier': bareCarrier.carrier.pid };
    const cpuBefore = cpuNow();
    const threadBefore = threadCpuSeconds(bareSide.pid);
    const started = performance.now();
    // Pushed as production's leads are (bench/ladder-campaign.ts pushLeads): batches of 100 over HTTP, one after
    // the other; the bare side starts their workflows, and that is its cost too.
    const attemptIds = Array.from({ length: LEADS }, () => `bare-${randomUUID()}`);
    for (let offset = 0; offset < LEADS; offset += 100) {
      const leads = attemptIds
        .slice(offset, offset + 100)
        .map((attemptId) => ({ attemptId, to: BUSY_PHONE_NO_AFTERMATH }));
      const response = await fetch(`http://127.0.0.1:${barePort}/leads`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leads }),
      });
      if (response.status !== 200) throw new Error(`bare intake answered ${response.status}: ${await response.text()}`);
    }
    const handles: WorkflowHandle[] = attemptIds.map((attemptId) => client.workflow.getHandle(attemptId));
    const outcomes = await Promise.all(handles.map((handle) => handle.result() as Promise<string>));
    const seconds = (performance.now() - started) / 1000;
    const workflowThreadCpuSeconds = threadCpuSeconds(bareSide.pid) - threadBefore;
    const cpuAfter = cpuNow();
    const cpuSeconds = cpuSecondsWithEndedBackends(cpuBefore, cpuAfter, groupOf(measured, cpuAfter));
    delete cpuSeconds.other;
    // The carrier's terminal status of a busy call, as the bare workflow returns it.
    const unexpected = outcomes.filter((outcome) => outcome !== 'busy');
    if (unexpected.length > 0) throw new Error(`bare leads ended otherwise: ${unexpected.slice(0, 5).join(', ')}`);
    return {
      seconds: Number(seconds.toFixed(2)),
      cpuSeconds,
      workflowThreadCpuSeconds: Number(workflowThreadCpuSeconds.toFixed(2)),
      workflowIds: handles.map((handle) => handle.workflowId),
    };
  };

  // Warm-up of both sides, a whole round each: first connections (and the statements each new pool connection
  // prepares), caches and the JIT are no lead's cost. With 50 leads only, production's first measured round still
  // ran high in every run (1.61x, 1.54x, 1.42x, 1.24x against 1.02x to 1.33x for the rounds after it), and with two
  // rounds the median is the higher one.
  await runBare();
  await production.runLeads(LEADS);
  const bareRuns = [];
  const productionRuns = [];
  for (let round = 0; round < ROUNDS; round++) {
    // The order alternates, so that a drift of the shared machine weighs on both.
    for (const side of round % 2 === 0 ? ['bare', 'production'] : ['production', 'bare']) {
      if (side === 'bare') {
        bareRuns.push(await runBare());
        console.error(`round ${round + 1}, bare: ${JSON.stringify(bareRuns.at(-1)!.cpuSeconds)}`);
      } else {
        const since = new Date(Date.now() - 1000);
        const run = await production.runLeads(LEADS);
        productionRuns.push({ ...run, since });
        console.error(`round ${round + 1}, production: ${JSON.stringify(run.cpuSeconds)}`);
      }
    }
  }
  // Histories of the last round of each: every round runs the same code, the figures per lead do not drift.
  const bareHistories = await historyFigures(client, bareRuns.at(-1)!.workflowIds);
  const lastProduction = productionRuns.at(-1)!;
  const productionIds = await workflowsOnQueue(client, production.taskQueue, lastProduction.since).catch(
    (error: unknown) => {
      console.error('listing the task queue failed, only the leads workflows are counted', error);
      return lastProduction.leadWorkflowIds;
    },
  );
  const campaignIds = new Set([...productionIds, ...lastProduction.leadWorkflowIds]);
  const productionHistories = await historyFigures(client, [...campaignIds]);
  const leadHistories = await historyFigures(client, lastProduction.leadWorkflowIds);

  const sum = (record: Record<string, number>, keys: string[]) =>
    keys.reduce((total, key) => total + (record[key] ?? 0), 0);
  const bareOwn = ['bare side (worker, receiver)', 'simulated carrier'];
  const productionOwn = ['worker', 'API', 'simulated carrier'];
  const summary = (
    runs: Array<{ cpuSeconds: Record<string, number>; workflowThreadCpuSeconds: number; seconds: number }>,
    own: string[],
  ) => ({
    ownCpuMsPerLead: perLeadMs(median(runs.map((run) => sum(run.cpuSeconds, own)))),
    temporalServerCpuMsPerLead: perLeadMs(median(runs.map((run) => run.cpuSeconds['Temporal server'] ?? 0))),
    // The cluster's persistence; none on the dev server (SQLite in its own process).
    temporalPostgresCpuMsPerLead: perLeadMs(median(runs.map((run) => run.cpuSeconds["Temporal's PostgreSQL"] ?? 0))),
    postgresCpuMsPerLead: perLeadMs(median(runs.map((run) => run.cpuSeconds.PostgreSQL ?? 0))),
    workflowThreadCpuMsPerLead: perLeadMs(median(runs.map((run) => run.workflowThreadCpuSeconds))),
    rounds: runs.map((run) => ({
      cpuSeconds: run.cpuSeconds,
      workflowThreadCpuSeconds: run.workflowThreadCpuSeconds,
      seconds: run.seconds,
    })),
  });
  const bare = { ...summary(bareRuns, bareOwn), ownProcesses: bareOwn, histories: bareHistories };
  const prod = {
    ...summary(productionRuns, productionOwn),
    ownProcesses: productionOwn,
    histories: productionHistories,
    leadWorkflowHistories: leadHistories,
  };
  const perLeadHistory = (figures: HistoryFigures) => ({
    events: perLead(figures.events),
    visibilityWrites: perLead(figures.visibilityWrites),
    workflowTasks: perLead(figures.workflowTasks),
    workflows: perLead(figures.workflows),
  });
  const cpuRatio = Number((prod.ownCpuMsPerLead / bare.ownCpuMsPerLead).toFixed(2));
  const productionPerLead = perLeadHistory(productionHistories);
  const verdicts = {
    cpu: { ratio: cpuRatio, target: `<= ${TARGETS.cpuRatioAtMost}x`, pass: cpuRatio <= TARGETS.cpuRatioAtMost },
    historyEvents: {
      perLead: productionPerLead.events,
      target: `<= ${TARGETS.historyEventsPerLeadAtMost}`,
      pass: productionPerLead.events <= TARGETS.historyEventsPerLeadAtMost,
    },
    visibilityWrites: {
      perLead: productionPerLead.visibilityWrites,
      target: `= ${TARGETS.visibilityWritesPerLead}`,
      pass: productionPerLead.visibilityWrites === TARGETS.visibilityWritesPerLead,
    },
  };
  const temporal = CLUSTER
    ? `production-shaped cluster on PostgreSQL, ${SHARDS} history shards`
    : 'CLI dev server in memory (one history shard)';
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      leads: LEADS,
      rounds: ROUNDS,
      temporal,
      timeScale: TIME_SCALE,
      phone: BUSY_PHONE_NO_AFTERMATH,
      intake: 'both sides: batches of 100 leads over HTTP; the bare side starts 20 workflows at once',
    },
    bare: { ...bare, perLead: perLeadHistory(bareHistories) },
    production: { ...prod, perLead: productionPerLead, leadWorkflowsPerLead: perLeadHistory(leadHistories) },
    targets: verdicts,
  };
  const name = CLUSTER ? 'bare-ladder-cluster' : 'bare-ladder';
  const typeRows = (figures: HistoryFigures) =>
    Object.entries(figures.byType).map(
      ([type, t]) =>
        `${type}: ${t.workflows} runs, ${(t.events / t.workflows).toFixed(1)} events, ${(t.upserts / t.workflows).toFixed(1)} upserts, ${(t.workflowTasks / t.workflows).toFixed(1)} workflow tasks each`,
    );
  const pass = (ok: boolean) => (ok ? 'pass' : '**fail**');
  writeBenchResults(name, result, [
    `# Bare ladder against the production path (${result.measuredAt})`,
    '',
    `${LEADS} one-call leads per round (busy at once on the simulated carrier, time scale ${TIME_SCALE}: one dial, one call-ended signal, no call intelligence), ${ROUNDS} rounds of each side alternating after a warm-up, one run on the same ${temporal}; CPU figures are medians of the rounds, history figures from the last round. ${result.machine.cpus} CPUs, load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}.`,
    '',
    '| per lead | bare | production |',
    '|-|-|-|',
    `| CPU of the side's own processes, ms | ${bare.ownCpuMsPerLead} (${bareOwn.join(', ')}) | ${prod.ownCpuMsPerLead} (${productionOwn.join(', ')}) |`,
    `| of which the workflow thread, ms | ${bare.workflowThreadCpuMsPerLead} | ${prod.workflowThreadCpuMsPerLead} |`,
    `| Temporal server CPU, ms | ${bare.temporalServerCpuMsPerLead} | ${prod.temporalServerCpuMsPerLead} |`,
    ...(CLUSTER
      ? [
          `| Temporal's PostgreSQL CPU, ms | ${bare.temporalPostgresCpuMsPerLead} | ${prod.temporalPostgresCpuMsPerLead} |`,
        ]
      : []),
    `| PostgreSQL (the app's) CPU, ms | ${bare.postgresCpuMsPerLead} | ${prod.postgresCpuMsPerLead} |`,
    `| workflows | ${result.bare.perLead.workflows} | ${productionPerLead.workflows} |`,
    `| history events | ${result.bare.perLead.events} | ${productionPerLead.events} |`,
    `| visibility writes | ${result.bare.perLead.visibilityWrites} | ${productionPerLead.visibilityWrites} |`,
    `| workflow tasks | ${result.bare.perLead.workflowTasks} | ${productionPerLead.workflowTasks} |`,
    `| the lead's own workflow alone: history events, visibility writes, workflow tasks | ${result.bare.perLead.events}, ${result.bare.perLead.visibilityWrites}, ${result.bare.perLead.workflowTasks} | ${result.production.leadWorkflowsPerLead.events}, ${result.production.leadWorkflowsPerLead.visibilityWrites}, ${result.production.leadWorkflowsPerLead.workflowTasks} |`,
    '',
    'The targets count everything a lead sets off (every workflow of the task queue the round ran, its call intelligence included); the row above shows the lead workflow alone.',
    '',
    `Targets: production CPU per lead ${cpuRatio}x bare (<= ${TARGETS.cpuRatioAtMost}x): ${pass(verdicts.cpu.pass)}; history events per lead ${productionPerLead.events} (<= ${TARGETS.historyEventsPerLeadAtMost}): ${pass(verdicts.historyEvents.pass)}; visibility writes per lead ${productionPerLead.visibilityWrites} (= ${TARGETS.visibilityWritesPerLead}): ${pass(verdicts.visibilityWrites.pass)}.`,
    '',
    `- Production workflows by type: ${typeRows(productionHistories).join('; ')}.`,
    `- Bare workflows: ${typeRows(bareHistories).join('; ')}.`,
    `- CPU seconds by round: bare ${JSON.stringify(bare.rounds.map((r) => r.cpuSeconds))}; production ${JSON.stringify(prod.rounds.map((r) => r.cpuSeconds))}.`,
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
  bareSide.stop();
  bareCarrier.carrier.stop();
  await production.stop();
  await Promise.all([waitForExit(bareSide.pid), waitForExit(bareCarrier.carrier.pid)]);
  await clientConnection.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await stop();
}
process.exit(0);
