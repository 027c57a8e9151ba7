// `npm run bench:stack-traces`: the CPU the workflow thread spends per one-call lead on the production path
// (bench/production-leads.ts) with the SDK's per-promise stack capture as it is, and without, alternating
// rounds in one run on the same stack. Writes bench/results/stack-traces.{json,md}.
import { median } from './alternating-rounds';
import os from 'node:os';
import { startBenchStack } from './bench-process';
import { startProductionSide, type ProductionRun } from './production-leads';
import { benchMachine, writeBenchResults } from './results-files';

const LEADS = Number(process.env.BENCH_LEADS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** The worker's variants: node flags and environment; the first is the baseline. */
const VARIANTS: Array<{ name: string; what: string; nodeArgs: string[]; env: Record<string, string> }> = [
  {
    name: 'stack-traces-on',
    what: 'WORKFLOW_STACK_TRACES=on, the SDK as it is: a promise hook in the workflow thread captures a 10-frame source-mapped stack per promise',
    nodeArgs: [],
    env: { WORKFLOW_STACK_TRACES: 'on' },
  },
  {
    name: 'on-stack-trace-limit-0',
    what: 'WORKFLOW_STACK_TRACES=on under node --stack-trace-limit=0: the hook still runs per promise, its stacks are empty (and so is every error stack)',
    nodeArgs: ['--stack-trace-limit=0'],
    env: { WORKFLOW_STACK_TRACES: 'on' },
  },
  {
    name: 'stack-traces-off',
    what: 'WORKFLOW_STACK_TRACES=off (the default): no promise hook in the workflow thread (worker/workflow-stack-traces.ts), nothing per promise',
    nodeArgs: [],
    env: { WORKFLOW_STACK_TRACES: 'off' },
  },
];

const { stack, stop, databaseUrl } = await startBenchStack('bench_stack_traces');
try {
  const side = await startProductionSide({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    bundlePath: stack.workflowBundlePath,
  });
  const runs = new Map<string, ProductionRun[]>(VARIANTS.map((variant) => [variant.name, []]));
  // A warm-up on the first worker: the API's and the database's first requests are no variant's cost.
  await side.runLeads(Math.min(50, LEADS));
  for (let round = 0; round < ROUNDS; round++) {
    // The order rotates, so that a drift of the shared machine weighs on every variant.
    for (let step = 0; step < VARIANTS.length; step++) {
      const variant = VARIANTS[(round + step) % VARIANTS.length]!;
      await side.restartWorker(variant.nodeArgs, variant.env);
      const run = await side.runLeads(LEADS);
      runs.get(variant.name)!.push(run);
      console.error(
        `round ${round + 1}, ${variant.name}: workflow thread ${run.workflowThreadCpuSeconds} s, ${JSON.stringify(run.cpuSeconds)}, ${run.seconds} s`,
      );
    }
  }
  await side.stop();
  const perLeadMs = (seconds: number) => Number(((seconds * 1000) / LEADS).toFixed(3));
  const results = VARIANTS.map((variant) => {
    const variantRuns = runs.get(variant.name)!;
    return {
      variant: variant.name,
      what: variant.what,
      nodeArgs: variant.nodeArgs.join(' '),
      workflowThreadCpuMsPerLead: perLeadMs(median(variantRuns.map((run) => run.workflowThreadCpuSeconds))),
      workerCpuMsPerLead: perLeadMs(median(variantRuns.map((run) => run.cpuSeconds.worker ?? 0))),
      rounds: variantRuns.map((run) => ({
        workflowThreadCpuMsPerLead: perLeadMs(run.workflowThreadCpuSeconds),
        cpuSeconds: run.cpuSeconds,
        seconds: run.seconds,
      })),
    };
  });
  const baseline = results[0]!;
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: { leads: LEADS, rounds: ROUNDS, temporal: stack.temporal.kind, sdk: '@temporalio/worker 1.24.0' },
    results,
  };
  writeBenchResults('stack-traces', result, [
    `# Workflow stack traces: the workflow thread's CPU per lead (${result.measuredAt})`,
    '',
    `${LEADS} one-call leads (answered, 0.3 s of talk) per round through the production API, worker and simulated carrier, ${ROUNDS} rounds per variant, the order rotating, one run on the same stack (Temporal ${stack.temporal.kind}); medians. ${result.machine.cpus} CPUs, load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}.`,
    '',
    '| variant | workflow thread CPU ms / lead | vs on | worker process CPU ms / lead | rounds (workflow thread ms / lead) |',
    '|-|-|-|-|-|',
    ...results.map(
      (r) =>
        `| ${r.variant} | ${r.workflowThreadCpuMsPerLead} | ${(r.workflowThreadCpuMsPerLead / baseline.workflowThreadCpuMsPerLead).toFixed(2)}x | ${r.workerCpuMsPerLead} | ${r.rounds.map((x) => x.workflowThreadCpuMsPerLead).join(', ')} |`,
    ),
    '',
    ...results.map((r) => `- ${r.variant}: ${r.what}.`),
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await stop();
}
process.exit(0);
