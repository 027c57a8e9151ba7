// `npm run bench:waiting`: what leads waiting for a line cost (issue 28), on the dev server, in one run. Writes
// bench/results/waiting.{json,md} (BENCH_WAITING_RESULTS renames them, for a run kept beside the default one).
//
// 1. idle: the stack (API, worker, simulated carrier, Temporal dev server, PostgreSQL) with nothing to do: its CPU.
// 2. one line each (the baseline): BENCH_WAITING_LEADS answered leads (2 s calls) pushed onto a running campaign
//    with a line for each; CPU and workflow tasks per lead, first push to last result.
// 3. queued: the same leads onto a campaign with BENCH_WAITING_LINES lines (10): the same figures, how busy the
//    lines were while leads waited (goal: at least 95 %), and how long a freed line stayed free before the next
//    queued lead took it.
// Between stages the stack settles back near idle (settle()).
// 3b. one line each, paced: the same leads onto a campaign with a line for each, pushed in batches of
//    BENCH_WAITING_LINES spread evenly over the queued run's time, so that calls are placed at the queued run's
//    rate. On this machine a lead's CPU depends on the rate (every process pays more per lead at a trickle than in
//    a burst: the simulated carrier too, whose work per call is the same), so this run isolates what waiting in
//    the queue costs, and the goals (workflow tasks at most 1.1x, CPU at most 1.2x) are read against it. The
//    burst baseline's ratios are shown beside them.
// 4. waiting: BENCH_WAITING_IDLE_LEADS leads pushed onto a campaign with one line and calls of real length (36 s),
//    a worker and carrier of their own: the stack's CPU above idle while they wait (goal: under 5 % of the
//    machine), and the worker's and Temporal's memory per waiting lead (goal: under 200 KB); then the campaign is
//    stopped and the time until every lead has ended is recorded.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createJsonPoster } from './http-post';
import { cpuNow, cpuSecondsBetween, descendsFrom, memoryOf, type ProcessCpu } from './measure';
import {
  apiHealthy,
  startBenchCarrier,
  startBenchProcess,
  startBenchStack,
  startBenchWorker,
  type BenchProcess,
} from './bench-process';
import { ALWAYS_OPEN, BENCH_LADDER, pushLeads } from './ladder-campaign';
import { benchMachine, writeBenchResults } from './results-files';
import { createDatabase, type Database } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { freePort } from '../scripts/stack/child-process';

const LEADS = Number(process.env.BENCH_WAITING_LEADS ?? 2_000);
const LINES = Number(process.env.BENCH_WAITING_LINES ?? 10);
const IDLE_LEADS = Number(process.env.BENCH_WAITING_IDLE_LEADS ?? 2_000);
const RESULTS_NAME = process.env.BENCH_WAITING_RESULTS ?? 'waiting';
/** An answered call to a number ending in 00 is 36 s on the simulated carrier (1 s queued, 5 s ringing, 30 s talk). */
const ANSWERED_PHONE = '+14155550100';
const CALL_SECONDS = 36;
/** Runs 2 and 3: 2 s calls. */
const SHORT_CALL_SCALE = 2 / CALL_SECONDS;
const IDLE_SECONDS = 20;
const SETTLE_WINDOW_S = 5;
const SETTLE_MAX_S = 120;
const WAITING_MEASURE_SECONDS = 60;
const SIGNING_SECRET = `bench-${randomUUID()}`;
const OWN_METRICS_PORTS = { METRICS_PORT: '0', WORKER_METRICS_PORT: '0', WORKER_SDK_METRICS_PORT: '0' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

const { stack, stop, started, databaseUrl } = await startBenchStack('bench_waiting');
const db = createDatabase(databaseUrl, { poolSize: 4 });
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
  scopes: ['campaigns.edit'],
});
const taskQueue = `bench-waiting-${randomUUID()}`;

async function startWorkerAndCarrier(timeScale: number, apiUrl: string) {
  const { carrier, url } = await startBenchCarrier(databaseUrl, SIGNING_SECRET, timeScale);
  started.push(carrier);
  const worker = startBenchWorker(
    { databaseUrl, temporalAddress: stack.temporalAddress, taskQueue, bundlePath: stack.workflowBundlePath },
    {
      ...OWN_METRICS_PORTS,
      SIMULATED_CARRIER_URL: url,
      SIMULATED_CARRIER_SIGNING_SECRET: SIGNING_SECRET,
      TELEPHONY_CALLBACK_BASE_URL: apiUrl,
    },
  );
  started.push(worker);
  await worker.printed('worker polling');
  return { carrier, worker };
}

const apiPort = await freePort();
const apiUrl = `http://127.0.0.1:${apiPort}`;
const api = startBenchProcess('api/main.ts', {
  ...OWN_METRICS_PORTS,
  DATABASE_URL: databaseUrl,
  TEMPORAL_ADDRESS: stack.temporalAddress,
  TEMPORAL_TASK_QUEUE: taskQueue,
  PORT: String(apiPort),
  EXPORT_DIR: path.join(os.tmpdir(), `bench-waiting-exports-${process.pid}`),
  SIMULATED_CARRIER_SIGNING_SECRET: SIGNING_SECRET,
});
started.push(api);
await apiHealthy(apiUrl);
const client = createJsonPoster(apiUrl, { authorization: `Bearer ${key}` }, 10);
const post = async (pathname: string, body: unknown, expected: number) => {
  const response = await client.post(pathname, body);
  if (response.status !== expected) throw new Error(`${pathname}: ${response.status} ${response.text}`);
};

/** The stack's processes by role; the dev server and PostgreSQL are this process's other children. */
function stackCpu(before: Map<number, ProcessCpu>, roles: Record<string, BenchProcess>) {
  const after = cpuNow();
  const used = cpuSecondsBetween(before, after, (pid) => {
    if (pid === process.pid) return 'load generator';
    for (const [role, running] of Object.entries(roles)) if (running.pid === pid) return role;
    return descendsFrom(after, pid, process.pid) ? 'Temporal and PostgreSQL' : 'other';
  });
  const stackSeconds = Object.entries(used)
    .filter(([name]) => name !== 'other' && name !== 'load generator')
    .reduce((sum, [, value]) => sum + value, 0);
  return { byRole: used, stackSeconds };
}

const createCampaign = (maxConcurrentCalls: number) =>
  db.campaign.create({
    data: {
      workspaceId,
      name: 'Bench',
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: { ...BENCH_LADDER, rungs: [{ delaySeconds: 0 }] },
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls,
    },
  });

const finishedCount = (campaignId: string) =>
  db.lead.count({ where: { campaignId, status: { in: ['completed', 'failed', 'cancelled'] } } });

/** Workflow tasks, history events and markers of the campaign's lead workflows, from their histories. */
async function historiesOf(dbHandle: Database, campaignId: string) {
  const leads = await dbHandle.lead.findMany({ where: { campaignId }, select: { workflowId: true } });
  let tasks = 0;
  let events = 0;
  let markers = 0;
  for (let offset = 0; offset < leads.length; offset += 20)
    await Promise.all(
      leads.slice(offset, offset + 20).map(async ({ workflowId }) => {
        const history = await temporal.workflow.getHandle(workflowId).fetchHistory();
        for (const event of history.events ?? []) {
          events++;
          if (event.workflowTaskCompletedEventAttributes) tasks++;
          if (event.markerRecordedEventAttributes) markers++;
        }
      }),
    );
  return {
    workflowTasksPerLead: round(tasks / leads.length),
    historyEventsPerLead: round(events / leads.length),
    markersPerLead: round(markers / leads.length),
  };
}

/** How busy the campaign's lines were while leads waited, and how long a freed line stayed free. */
async function linesOf(campaignId: string, lines: number) {
  const calls = await db.call.findMany({ where: { campaignId }, select: { startedAt: true, endedAt: true } });
  const starts = calls.map((call) => call.startedAt.getTime()).sort((a, b) => a - b);
  const ends = calls.map((call) => call.endedAt!.getTime()).sort((a, b) => a - b);
  // While leads wait: from the first call's start to the last call's start (no lead waits after it).
  const from = starts[0]!;
  const until = starts.at(-1)!;
  const busyMs = calls.reduce(
    (sum, call) => sum + Math.max(0, Math.min(call.endedAt!.getTime(), until) - call.startedAt.getTime()),
    0,
  );
  // With leads always waiting, the k-th line given back is taken by the (k + lines)-th call.
  const handOverMs = ends
    .slice(0, Math.max(0, starts.length - lines))
    .map((end, index) => starts[index + lines]! - end)
    .sort((a, b) => a - b);
  const percentile = (p: number) => handOverMs[Math.min(handOverMs.length - 1, Math.floor(handOverMs.length * p))] ?? 0;
  return {
    linesBusyWhileLeadsWait: round(busyMs / (lines * (until - from)), 3),
    freedLineTakenAfterMs: { p50: percentile(0.5), p99: percentile(0.99), max: handOverMs.at(-1) ?? 0 },
  };
}

/** Pushes the leads in batches of `batch`, the k-th batch `k * everyMs` after the first. */
async function pushPaced(campaignId: string, batch: number, everyMs: number) {
  const firstAt = performance.now();
  for (let offset = 0, k = 0; offset < LEADS; offset += batch, k++) {
    await sleep(Math.max(0, firstAt + k * everyMs - performance.now()));
    const size = Math.min(batch, LEADS - offset);
    await post(
      `/v1/campaigns/${campaignId}/leads/batch`,
      {
        leads: Array.from({ length: size }, () => ({ lead: { phone: ANSWERED_PHONE }, idempotencyKey: randomUUID() })),
      },
      200,
    );
  }
}

async function dialRun(
  name: string,
  lines: number,
  roles: Record<string, BenchProcess>,
  pace?: { batch: number; everyMs: number },
) {
  const campaign = await createCampaign(lines);
  const before = cpuNow();
  const firstPush = performance.now();
  if (pace) await pushPaced(campaign.id, pace.batch, pace.everyMs);
  else
    await pushLeads(post, campaign.id, LEADS, () => ({
      lead: { phone: ANSWERED_PHONE },
      idempotencyKey: randomUUID(),
    }));
  let reportedAt = 0;
  while ((await finishedCount(campaign.id)) < LEADS) {
    await sleep(500);
    const seconds = Math.round((performance.now() - firstPush) / 1000);
    if (seconds - reportedAt >= 30) {
      reportedAt = seconds;
      console.error(`${name}: ${seconds} s, ${await finishedCount(campaign.id)} of ${LEADS} finished`);
    }
  }
  const seconds = (performance.now() - firstPush) / 1000;
  const cpu = stackCpu(before, roles);
  const result = {
    leads: LEADS,
    lines,
    ...(pace && { pushedInBatchesOf: pace.batch, everySeconds: round(pace.everyMs / 1000, 3) }),
    firstPushToLastResultSeconds: round(seconds, 1),
    stackCpuMsPerLead: round((cpu.stackSeconds * 1000) / LEADS),
    cpuMsPerLeadByRole: Object.fromEntries(
      Object.entries(cpu.byRole).map(([role, value]) => [role, round((value * 1000) / LEADS)]),
    ),
    ...(await historiesOf(db, campaign.id)),
    ...(lines < LEADS && (await linesOf(campaign.id, lines))),
  };
  console.error(`${name}: ${JSON.stringify(result)}`);
  return result;
}

try {
  let { carrier, worker } = await startWorkerAndCarrier(SHORT_CALL_SCALE, apiUrl);
  const roles = () => ({ API: api, worker, 'simulated carrier': carrier });
  await sleep(5_000);
  const idleBefore = cpuNow();
  await sleep(IDLE_SECONDS * 1000);
  const idleCpu = stackCpu(idleBefore, roles());
  const idleShare = idleCpu.stackSeconds / (IDLE_SECONDS * os.cpus().length);
  console.error(`idle: ${(idleShare * 100).toFixed(2)} % of the machine`);

  /**
   * Waits until the stack is back near idle (its CPU over SETTLE_WINDOW_S at most twice the idle share, or at most
   * SETTLE_MAX_S): what the previous stage left behind (the closes and visibility of its 2,000 runs, the fetch of
   * their histories) is not the next stage's cost, and a lead of the next stage is not slowed by it.
   */
  const settled: Record<string, number> = {};
  const settle = async (before: string) => {
    const began = performance.now();
    for (;;) {
      const windowBefore = cpuNow();
      await sleep(SETTLE_WINDOW_S * 1000);
      const share = stackCpu(windowBefore, roles()).stackSeconds / (SETTLE_WINDOW_S * os.cpus().length);
      const seconds = (performance.now() - began) / 1000;
      if (share <= 2 * idleShare || seconds >= SETTLE_MAX_S) {
        settled[before] = round(seconds, 1);
        console.error(
          `settled before ${before} in ${settled[before]} s (${(share * 100).toFixed(2)} % of the machine)`,
        );
        return;
      }
    }
  };

  const oneLineEach = await dialRun('one line each', LEADS, roles());
  await settle('queued');
  const queued = await dialRun(`queued on ${LINES} lines`, LINES, roles());
  await settle('paced');
  // The queued run's batches of LINES leads, one call length each, end to end: from the first call's start to the
  // last's, evenly.
  const callsSpanMs = (queued.firstPushToLastResultSeconds - CALL_SECONDS * SHORT_CALL_SCALE) * 1000;
  const paced = await dialRun('one line each, paced', LEADS, roles(), {
    batch: LINES,
    everyMs: callsSpanMs / Math.max(1, Math.ceil(LEADS / LINES) - 1),
  });

  // Waiting: calls of real length on a worker and carrier of their own.
  carrier.stop();
  worker.stop();
  await sleep(3_000);
  ({ carrier, worker } = await startWorkerAndCarrier(1, apiUrl));
  const temporalPid = readdirSync('/proc')
    .map(Number)
    .filter((pid) => pid && descendsFrom(cpuNow(), pid, process.pid))
    .find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('server');
      } catch {
        return false;
      }
    });
  const memory = () => ({
    workerRssMb: worker.memory().rssMb,
    temporalRssMb: temporalPid ? memoryOf(temporalPid, (file) => readFileSync(file, 'utf8')).rssMb : null,
  });
  await sleep(5_000);
  const memoryBefore = memory();
  const waitingCampaign = await createCampaign(1);
  await pushLeads(post, waitingCampaign.id, IDLE_LEADS, () => ({
    lead: { phone: ANSWERED_PHONE },
    idempotencyKey: randomUUID(),
  }));
  await sleep(20_000);
  const waitingBefore = cpuNow();
  await sleep(WAITING_MEASURE_SECONDS * 1000);
  const waitingCpu = stackCpu(waitingBefore, roles());
  const waitingShare = waitingCpu.stackSeconds / (WAITING_MEASURE_SECONDS * os.cpus().length);
  const memoryWaiting = memory();
  const callsPlaced = await db.call.count({ where: { campaignId: waitingCampaign.id } });
  const stopAt = performance.now();
  // The stop answers once committed (campaignWorkflow, patch campaign-answer-before-waking); its leads are woken
  // after the answer.
  const stopAnswer = await client.post(`/campaigns/${waitingCampaign.id}/stop`, {});
  if (stopAnswer.status !== 200) throw new Error(`stop: ${stopAnswer.status} ${stopAnswer.text}`);
  const stopAnswerSeconds = (performance.now() - stopAt) / 1000;
  while ((await finishedCount(waitingCampaign.id)) < IDLE_LEADS) await sleep(500);
  const stopSeconds = (performance.now() - stopAt) / 1000;
  // The stop marks every lead cancelled in its own commit; a lead that never had a line has no workflow and gets none
  // (settledWithoutWorkflowAt): until every lead that had one has seen its workflow closed.
  const settledWithoutWorkflow = await db.lead.count({
    where: { campaignId: waitingCampaign.id, settledWithoutWorkflowAt: { not: null } },
  });
  const closedQuery = `CampaignId = '${waitingCampaign.id}' AND ExecutionStatus != 'Running'`;
  while ((await temporal.workflow.count(closedQuery)).count < IDLE_LEADS - settledWithoutWorkflow) await sleep(500);
  const stopWorkflowsSeconds = (performance.now() - stopAt) / 1000;
  const kbPerLead = (before: number | null, after: number | null) =>
    before === null || after === null ? null : round(((after - before) * 1024) / IDLE_LEADS, 1);
  const waiting = {
    leads: IDLE_LEADS,
    lines: 1,
    callSeconds: CALL_SECONDS,
    measuredSeconds: WAITING_MEASURE_SECONDS,
    callsPlacedMeanwhile: callsPlaced,
    idleStackShareOfMachine: round(idleShare, 4),
    waitingStackShareOfMachine: round(waitingShare, 4),
    aboveIdleShareOfMachine: round(waitingShare - idleShare, 4),
    cpuMsPerSecondByRole: Object.fromEntries(
      Object.entries(waitingCpu.byRole).map(([role, value]) => [role, round((value * 1000) / WAITING_MEASURE_SECONDS)]),
    ),
    memoryBefore,
    memoryWaiting,
    workerKbPerWaitingLead: kbPerLead(memoryBefore.workerRssMb, memoryWaiting.workerRssMb),
    temporalKbPerWaitingLead: kbPerLead(memoryBefore.temporalRssMb, memoryWaiting.temporalRssMb),
    stopAnsweredSeconds: round(stopAnswerSeconds, 2),
    stopToEveryLeadEndedSeconds: round(stopSeconds, 1),
    stopToEveryLeadWorkflowClosedSeconds: round(stopWorkflowsSeconds, 1),
    leadsSettledWithoutWorkflow: settledWithoutWorkflow,
  };
  console.error(`waiting: ${JSON.stringify(waiting)}`);

  const ratiosTo = (baseline: typeof oneLineEach) => ({
    workflowTasksPerLead: round(queued.workflowTasksPerLead / baseline.workflowTasksPerLead, 3),
    stackCpuPerLead: round(queued.stackCpuMsPerLead / baseline.stackCpuMsPerLead, 3),
  });
  const ratios = ratiosTo(paced);
  const ratiosToBurst = ratiosTo(oneLineEach);
  const goals = {
    'workflow tasks per lead at most 1.1x': ratios.workflowTasksPerLead <= 1.1,
    'CPU per lead at most 1.2x': ratios.stackCpuPerLead <= 1.2,
    'lines busy at least 95 % while leads wait': (queued.linesBusyWhileLeadsWait ?? 0) >= 0.95,
    'CPU above idle under 5 % of the machine while leads wait': waiting.aboveIdleShareOfMachine < 0.05,
    'worker memory under 200 KB per waiting lead': (waiting.workerKbPerWaitingLead ?? 0) < 200,
  };
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: { leads: LEADS, lines: LINES, callSeconds: CALL_SECONDS * SHORT_CALL_SCALE, waitingLeads: IDLE_LEADS },
    ...(process.env.BENCH_NOTE && { note: process.env.BENCH_NOTE }),
    oneLineEach,
    queued,
    paced,
    ratios,
    ratiosToBurst,
    settledBeforeSeconds: settled,
    waiting,
    goals,
  };
  const row = (label: string, baseline: string | number, measured: string | number | undefined, ratio = '') =>
    `| ${label} | ${baseline} | ${measured} | ${ratio} |`;
  writeBenchResults(RESULTS_NAME, result, [
    `# Leads waiting for a line (bench/waiting.ts)`,
    '',
    `Measured ${result.measuredAt} on ${result.machine.cpus} CPUs (${result.machine.model}), Node ${result.machine.node}; ` +
      `load average at the end ${result.machine.loadAverage.map((value) => value.toFixed(2)).join(' ')}.`,
    '',
    `${LEADS} answered leads, ${round(CALL_SECONDS * SHORT_CALL_SCALE, 1)} s calls, one rung.`,
    '',
    `Baseline: one line each, the leads pushed ${LINES} at a time every ${paced.everySeconds} s (the queued run's ` +
      `rate). Beside it, the same leads pushed at once, 100 a batch (burst). Before the queued and the paced runs ` +
      `the stack was let settle back near idle (${settled.queued} s and ${settled.paced} s).`,
    '',
    `| | one line each, paced (baseline) | queued on ${LINES} lines | ratio | one line each, burst | ratio to burst |`,
    '|-|-|-|-|-|-|',
    row(
      'workflow tasks per lead',
      paced.workflowTasksPerLead,
      queued.workflowTasksPerLead,
      `${ratios.workflowTasksPerLead}x | ${oneLineEach.workflowTasksPerLead} | ${ratiosToBurst.workflowTasksPerLead}x`,
    ),
    row(
      'stack CPU ms per lead',
      paced.stackCpuMsPerLead,
      queued.stackCpuMsPerLead,
      `${ratios.stackCpuPerLead}x | ${oneLineEach.stackCpuMsPerLead} | ${ratiosToBurst.stackCpuPerLead}x`,
    ),
    ...['worker', 'API', 'Temporal and PostgreSQL', 'simulated carrier'].map((role) =>
      row(
        `of which ${role}`,
        paced.cpuMsPerLeadByRole[role] ?? 0,
        queued.cpuMsPerLeadByRole[role] ?? 0,
        ` | ${oneLineEach.cpuMsPerLeadByRole[role] ?? 0} |`,
      ),
    ),
    row(
      'history events per lead',
      paced.historyEventsPerLead,
      queued.historyEventsPerLead,
      ` | ${oneLineEach.historyEventsPerLead} |`,
    ),
    row('markers per lead', paced.markersPerLead, queued.markersPerLead, ` | ${oneLineEach.markersPerLead} |`),
    row(
      'first push to last result, s',
      paced.firstPushToLastResultSeconds,
      queued.firstPushToLastResultSeconds,
      ` | ${oneLineEach.firstPushToLastResultSeconds} |`,
    ),
    row('lines busy while leads wait', '', queued.linesBusyWhileLeadsWait, ' | |'),
    row(
      'a freed line taken after, ms (p50 / p99 / max)',
      '',
      `${queued.freedLineTakenAfterMs?.p50} / ${queued.freedLineTakenAfterMs?.p99} / ${queued.freedLineTakenAfterMs?.max}`,
      ' | |',
    ),
    '',
    `Waiting: ${IDLE_LEADS} leads on one line, ${CALL_SECONDS} s calls, measured for ${WAITING_MEASURE_SECONDS} s ` +
      `(${callsPlaced} calls placed by then).`,
    '',
    `- The stack idle: ${(idleShare * 100).toFixed(2)} % of the machine; with the leads waiting: ` +
      `${(waitingShare * 100).toFixed(2)} %; above idle: ${(waiting.aboveIdleShareOfMachine * 100).toFixed(2)} %.`,
    `- Worker RSS ${memoryBefore.workerRssMb} MB before, ${memoryWaiting.workerRssMb} MB waiting: ` +
      `${waiting.workerKbPerWaitingLead} KB per waiting lead. Temporal dev server: ${waiting.temporalKbPerWaitingLead} KB per waiting lead.`,
    `- The stop answered 200 in ${waiting.stopAnsweredSeconds} s; every lead was marked cancelled within ` +
      `${waiting.stopToEveryLeadEndedSeconds} s (${settledWithoutWorkflow} of them, queued and never handed a line, ` +
      `settled without a workflow), and every other lead's workflow had closed ` +
      `${waiting.stopToEveryLeadWorkflowClosedSeconds} s after the stop.`,
    '',
    '| goal | met |',
    '|-|-|',
    ...Object.entries(goals).map(([goal, met]) => `| ${goal} | ${met ? 'yes' : 'no'} |`),
    '',
  ]);
  console.log(JSON.stringify(result));
} finally {
  client.close();
  await connection.close();
  await db.$disconnect();
  for (const running of started) running.stop();
  await stop();
}
process.exit(0);
