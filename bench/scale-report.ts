// The markdown of bench/scale.ts's results, from its JSON alone: `tsx bench/scale-report.ts [name]` writes
// bench/results/<name>.md (default scale) again from its .json (a report changed after a long run).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeBenchResults } from './results-files';
import { projectRoot } from '../scripts/stack/paths';

interface CpuShare {
  /** CPU ms per lead (per push in the intake) of each process group. */
  cpuMsPerLead: Record<string, number>;
  /** The processes' CPU over the interval's wall time and all CPUs. */
  busyShareOfCpus: number;
}

export interface ScaleRun {
  server: string;
  workers: number;
  intake: CpuShare & {
    pushes: number;
    pushesAnsweredPerSecond: number;
    pushP50Ms: number;
    pushP99Ms: number;
    workflowsStartedPerSecond: number;
  };
  ladder: CpuShare & {
    leads: number;
    calls: number;
    pushSeconds: number;
    firstPushToLastResultSeconds: number;
    leadsFinishedPerSecond: number;
    workerPeakRssMb: number;
  };
}

export interface ScaleResult {
  measuredAt: string;
  machine: { cpus: number; model: string | undefined; node: string; loadAverage: number[] };
  setup: {
    pushes: number;
    pushConcurrency: number;
    leads: number;
    rungs: number;
    rungDelaySeconds: number;
    busyCallSeconds: number;
    maxConcurrentCalls: number;
  };
  note?: string;
  results: ScaleRun[];
}

const GROUPS = [
  'Temporal server',
  "Temporal's PostgreSQL",
  "app's PostgreSQL",
  'API',
  'workers',
  'simulated carrier',
  'load generator',
];
const sumOf = (perLead: Record<string, number>) =>
  Object.entries(perLead)
    .filter(([group]) => group !== 'other')
    .reduce((sum, [, value]) => sum + value, 0);
const cell = (value: number | undefined) => (value === undefined ? '–' : String(value));
const percent = (share: number) => `${(share * 100).toFixed(0)} %`;

export function scaleReport(result: ScaleResult): string[] {
  const { setup, results } = result;
  return [
    `# Scale by Temporal server and workers (\`npm run bench:scale\`, ${result.measuredAt})`,
    '',
    ...(result.note ? [`**${result.note}**`, ''] : []),
    `One run, one machine (${result.machine.cpus} CPUs, ${result.machine.model ?? 'unknown model'}, shared by every process below; load average at the end ${result.machine.loadAverage
      .map((load) => load.toFixed(2))
      .join(', ')}). Each server fresh for its runs; both PostgreSQL clusters crash-safe (fsync on).`,
    '',
    `Intake: ${setup.pushes} single pushes, ${setup.pushConcurrency} in flight, to an API whose task queue no worker polls; "started" counts until every lead's workflow is started.`,
    `Ladder: ${setup.leads} busy leads in batches of 100, ${setup.rungs} rungs ${setup.rungDelaySeconds} s apart, each call busy ${setup.busyCallSeconds.toFixed(1)} s after its dial on the simulated carrier (${setup.leads * setup.rungs} calls).`,
    '"CPU busy": the measured processes\' CPU time over the wall time of all CPUs.',
    '',
    '| Temporal server | workers | pushes answered/s | workflows started/s | intake CPU busy | ladder: first push to last result, s | leads/s | ladder CPU busy | worker peak RSS MB |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...results.map(
      ({ server, workers, intake, ladder }) =>
        `| ${server} | ${workers} | ${intake.pushesAnsweredPerSecond} | ${intake.workflowsStartedPerSecond} | ${percent(intake.busyShareOfCpus)} | ${ladder.firstPushToLastResultSeconds} | ${ladder.leadsFinishedPerSecond} | ${percent(ladder.busyShareOfCpus)} | ${ladder.workerPeakRssMb} |`,
    ),
    '',
    '## CPU ms per lead, by process group',
    '',
    `| Temporal server | workers | phase | ${GROUPS.join(' | ')} | all |`,
    `| --- | ---: | --- | ${GROUPS.map(() => '---:').join(' | ')} | ---: |`,
    ...results.flatMap(({ server, workers, intake, ladder }) =>
      (
        [
          ['intake', intake.cpuMsPerLead],
          ['ladder', ladder.cpuMsPerLead],
        ] as const
      ).map(
        ([phase, perLead]) =>
          `| ${server} | ${workers} | ${phase} | ${GROUPS.map((group) => cell(perLead[group])).join(' | ')} | ${sumOf(perLead).toFixed(1)} |`,
      ),
    ),
    '',
    '## Cores each group kept busy during the ladder',
    '',
    "CPU ms per lead × leads finished per second. A worker process runs its workflow activations on one thread (the SDK's default with `reuseV8Context`) and its activities on its main thread: docs/cluster.md#scale-by-server-shards-and-workers-npm-run-benchscale has the profile of each.",
    '',
    `| Temporal server | workers | ${GROUPS.join(' | ')} | all |`,
    `| --- | ---: | ${GROUPS.map(() => '---:').join(' | ')} | ---: |`,
    ...results.map(({ server, workers, ladder }) => {
      const cores = (ms: number | undefined) =>
        ms === undefined ? undefined : Number(((ms * ladder.leadsFinishedPerSecond) / 1000).toFixed(2));
      return `| ${server} | ${workers} | ${GROUPS.map((group) => cell(cores(ladder.cpuMsPerLead[group]))).join(' | ')} | ${cores(sumOf(ladder.cpuMsPerLead))} |`;
    }),
    '',
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const name = process.argv[2] ?? 'scale';
  const result = JSON.parse(readFileSync(path.join(projectRoot, `bench/results/${name}.json`), 'utf8')) as ScaleResult;
  writeBenchResults(name, result, scaleReport(result));
}
