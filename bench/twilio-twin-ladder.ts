// `npm run bench:twilio-twin-ladder`: the three-rung dial ladder through the Twilio twin (the Twilio adapter on the
// official SDK: form-encoded REST dials with Basic auth, callbacks signed X-Twilio-Signature and checked against
// PUBLIC_BASE_URL) against the same ladder through the simulated carrier (its JSON protocol of its own), in one run,
// on the same API and worker processes, Temporal dev server and PostgreSQL, rounds alternating after a warm-up.
// Busy numbers, so every lead takes all three rungs (three dials, three calls' callbacks) and no call has an
// aftermath; the rungs are 1 s apart and both carriers run at time scale 0.01.
// Per lead: CPU of the product's processes (worker and API), of the carrier it dials (the simulated carrier or the
// twin) apart, of the Temporal server and PostgreSQL apart, and the wall time of a round. Goal (issue 29): the twin
// path at most 1.1x the simulated one, for the product's processes: what a customer runs. The carrier's CPU is shown
// but not weighed: in production Twilio runs it, and neither the twin nor the simulated carrier ships.
// Writes bench/results/twilio-twin-ladder.{json,md}.
import { median } from './alternating-rounds';
import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { nodeArgsFromEnv, startBenchStack } from './bench-process';
import { historyFigures } from './history-figures';
import { BENCH_LADDER } from './ladder-campaign';
import {
  BUSY_PHONE_NO_AFTERMATH,
  TIME_SCALE,
  startProductionSide,
  type BenchCarrierPath,
  type ProductionRun,
} from './production-leads';
import { benchMachine, writeBenchResults } from './results-files';

const LEADS = Number(process.env.BENCH_LEADS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TARGET_RATIO = 1.1;
const PRODUCT = ['worker', 'API'];
const CARRIER: Record<BenchCarrierPath, string> = { simulated: 'simulated carrier', 'twilio-twin': 'Twilio twin' };

const { stack, stop, databaseUrl } = await startBenchStack('bench_twilio_twin_ladder');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'bench-twilio-twin-ladder-'));
try {
  const side = await startProductionSide({
    phone: BUSY_PHONE_NO_AFTERMATH,
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    bundlePath: stack.workflowBundlePath,
    scratchDir: scratch,
    workerNodeArgs: nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS'),
    apiNodeArgs: nodeArgsFromEnv('BENCH_API_NODE_ARGS'),
    twilioTwin: true,
  });

  /** A round, and proof it went the way it says: three calls a lead, each recorded under the path's provider. */
  const round = async (carrier: BenchCarrierPath, leads: number) => {
    const run = await side.runLeads(leads, { carrier, dialLadder: BENCH_LADDER });
    const calls = await side.db.call.groupBy({
      by: ['provider', 'outcome'],
      where: { campaignId: run.campaignId },
      _count: true,
    });
    const expectedProvider = carrier === 'twilio-twin' ? 'twilio-twin' : 'simulated';
    const wrong = calls.filter((group) => group.provider !== expectedProvider || group.outcome !== 'busy');
    const total = calls.reduce((sum, group) => sum + group._count, 0);
    if (wrong.length > 0 || total !== leads * BENCH_LADDER.rungs.length)
      throw new Error(
        `${carrier} round: calls ${JSON.stringify(calls)}, expected ${leads * 3} busy ${expectedProvider}`,
      );
    return { ...run, calls: total };
  };

  // Warm-up of both paths: first connections, the SDK's and the JIT's first costs are no lead's.
  await round('simulated', Math.min(30, LEADS));
  await round('twilio-twin', Math.min(30, LEADS));
  const runs: Record<BenchCarrierPath, Array<ProductionRun & { calls: number }>> = { simulated: [], 'twilio-twin': [] };
  for (let index = 0; index < ROUNDS; index++) {
    // The order alternates, so that a drift of the shared machine weighs on both.
    const order: BenchCarrierPath[] = index % 2 === 0 ? ['simulated', 'twilio-twin'] : ['twilio-twin', 'simulated'];
    for (const carrier of order) {
      runs[carrier].push(await round(carrier, LEADS));
      console.error(`round ${index + 1}, ${carrier}: ${JSON.stringify(runs[carrier].at(-1)!.cpuSeconds)}`);
    }
  }

  const perLeadMs = (seconds: number) => Number(((seconds * 1000) / LEADS).toFixed(2));
  const summary = (carrier: BenchCarrierPath) => {
    const ofRuns = (pick: (run: ProductionRun) => number) => perLeadMs(median(runs[carrier].map(pick)));
    return {
      productCpuMsPerLead: ofRuns((run) => PRODUCT.reduce((sum, name) => sum + (run.cpuSeconds[name] ?? 0), 0)),
      carrierCpuMsPerLead: ofRuns((run) => run.cpuSeconds[CARRIER[carrier]] ?? 0),
      byProcessMsPerLead: Object.fromEntries(
        [...PRODUCT, 'Temporal server', 'PostgreSQL'].map((name) => [name, ofRuns((run) => run.cpuSeconds[name] ?? 0)]),
      ),
      workflowThreadCpuMsPerLead: ofRuns((run) => run.workflowThreadCpuSeconds),
      secondsPerRound: median(runs[carrier].map((run) => run.leadsFinishedSeconds)),
      callsPerLead: runs[carrier].at(-1)!.calls / LEADS,
      rounds: runs[carrier].map((run) => ({ cpuSeconds: run.cpuSeconds, seconds: run.leadsFinishedSeconds })),
    };
  };
  // What the last round of each path left in its leads' histories: the same workflow, whichever carrier it dials.
  const temporalConnection = await Connection.connect({ address: stack.temporalAddress });
  const historiesOf = async (carrier: BenchCarrierPath) => {
    const figures = await historyFigures(
      new Client({ connection: temporalConnection }),
      runs[carrier].at(-1)!.leadWorkflowIds,
    );
    return {
      eventsPerLead: Number((figures.events / figures.workflows).toFixed(2)),
      workflowTasksPerLead: Number((figures.workflowTasks / figures.workflows).toFixed(2)),
    };
  };
  const histories = { simulated: await historiesOf('simulated'), 'twilio-twin': await historiesOf('twilio-twin') };
  await temporalConnection.close();
  const simulated = { ...summary('simulated'), histories: histories.simulated };
  const twin = { ...summary('twilio-twin'), histories: histories['twilio-twin'] };
  const ratio = Number((twin.productCpuMsPerLead / simulated.productCpuMsPerLead).toFixed(2));
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      leads: LEADS,
      rounds: ROUNDS,
      timeScale: TIME_SCALE,
      phone: BUSY_PHONE_NO_AFTERMATH,
      ladder: BENCH_LADDER,
    },
    simulated,
    twilioTwin: twin,
    target: { ratio, atMost: TARGET_RATIO, pass: ratio <= TARGET_RATIO },
  };
  const row = (label: string, pick: (s: typeof simulated) => string | number) =>
    `| ${label} | ${pick(simulated)} | ${pick(twin)} |`;
  writeBenchResults('twilio-twin-ladder', result, [
    `# The dial ladder through the Twilio twin against the simulated carrier (${result.measuredAt})`,
    '',
    `${LEADS} leads per round on a three-rung ladder (rungs 1 s apart, a busy number: three dials and three calls' events a lead, no aftermath), ${ROUNDS} rounds of each path alternating after a warm-up, the same API and worker processes, Temporal CLI dev server and PostgreSQL; both carriers at time scale ${TIME_SCALE}. CPU figures are medians of the rounds. ${result.machine.cpus} CPUs, load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}.`,
    '',
    '| per lead | simulated carrier | Twilio twin (the Twilio adapter) |',
    '|-|-|-|',
    row("CPU of the product's processes (worker, API), ms", (s) => s.productCpuMsPerLead),
    row('worker, ms', (s) => s.byProcessMsPerLead.worker!),
    row('of which the workflow thread, ms', (s) => s.workflowThreadCpuMsPerLead),
    row('API, ms', (s) => s.byProcessMsPerLead.API!),
    row('the carrier it dials (not weighed), ms', (s) => s.carrierCpuMsPerLead),
    row('Temporal server, ms', (s) => s.byProcessMsPerLead['Temporal server']!),
    row("PostgreSQL (the app's and the carrier's), ms", (s) => s.byProcessMsPerLead.PostgreSQL!),
    row('calls', (s) => s.callsPerLead),
    row("history events of the lead's workflow", (s) => s.histories.eventsPerLead),
    row('workflow tasks', (s) => s.histories.workflowTasksPerLead),
    row('seconds a round (median)', (s) => s.secondsPerRound),
    '',
    `Target: the product's CPU per lead through the twin ${ratio}x through the simulated carrier (<= ${TARGET_RATIO}x): ${result.target.pass ? 'pass' : '**fail**'}.`,
    '',
    `- CPU seconds by round: simulated ${JSON.stringify(simulated.rounds.map((r) => r.cpuSeconds))}; Twilio twin ${JSON.stringify(twin.rounds.map((r) => r.cpuSeconds))}.`,
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
  await side.stop();
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await stop();
}
process.exit(0);
