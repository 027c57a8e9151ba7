// `npm run bench:startup`: how long the API and the worker take to start, and their resident memory idle, run
// as production ran them before the build existed (TypeScript through tsx: `node --import tsx api/main.ts`) and
// as the image runs them now (`npm run build`, then `node dist/api/main.js`), alternating in one run on the same
// servers (an embedded PostgreSQL and the Temporal dev server in memory, as the tests use). Start: from the spawn
// to /health answering 200 (the API, with PostgreSQL and Temporal up), to the worker's "polling" line
// (Worker.create done with its prebuilt workflow bundle: the tsx worker loads one bundled from the sources, the
// compiled worker dist/workflow-bundle.js). Idle RSS: VmRSS after BENCH_IDLE_SECONDS (default 10) with nothing
// to do. BENCH_RUNS (default 5) runs of each. Writes bench/results/startup.json and .md.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildAppLikeTheImage } from '../scripts/build';
import { freePort } from '../scripts/stack/child-process';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { ensureDatabase } from '../scripts/stack/postgres';
import { startBenchProcess, type BenchProcess } from './bench-process';
import { writeBenchResults } from './results-files';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Variant = 'tsx' | 'compiled';
type Role = 'api' | 'worker';
interface Sample {
  startMs: number;
  idleRssMb: number;
}

/** SIGTERM, then the process gone (each measurement starts on a machine without the previous one). */
async function stopAndWait(child: BenchProcess) {
  child.stop();
  const deadline = Date.now() + 30_000;
  while (existsSync(`/proc/${child.pid}`)) {
    if (Date.now() > deadline) process.kill(child.pid, 'SIGKILL');
    await sleep(50);
  }
}

async function idleRss(child: BenchProcess): Promise<number> {
  await sleep(IDLE_SECONDS * 1000);
  return child.memory().rssMb;
}

function summary(samples: Sample[]) {
  const statsOf = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)!, all: values };
  };
  return {
    startMs: statsOf(samples.map((sample) => sample.startMs)),
    idleRssMb: statsOf(samples.map((sample) => sample.idleRssMb)),
  };
}

const { stack, stop } = await startTestStack();
const appDir = mkdtempSync(path.join(os.tmpdir(), 'bench-startup-'));
try {
  await ensureDatabase(stack.postgresAdminUrl, 'bench', stack.templateDatabase);
  const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, '/bench');
  const buildStarted = performance.now();
  const distDir = buildAppLikeTheImage(appDir);
  const buildSeconds = Number(((performance.now() - buildStarted) / 1000).toFixed(1));
  const entries: Record<Variant, Record<Role, string> & { bundlePath: string }> = {
    tsx: { api: 'api/main.ts', worker: 'worker/main.ts', bundlePath: stack.workflowBundlePath },
    compiled: {
      api: path.join(distDir, 'api/main.js'),
      worker: path.join(distDir, 'worker/main.js'),
      bundlePath: path.join(distDir, 'workflow-bundle.js'),
    },
  };
  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: `bench-startup-${Date.now()}`,
    ...extra,
  });

  const measureApi = async (variant: Variant): Promise<Sample> => {
    const port = await freePort();
    const started = performance.now();
    const api = startBenchProcess(entries[variant].api, env({ PORT: String(port) }));
    for (;;) {
      const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
        (response) => response.status,
        () => 0,
      );
      if (answered === 200) break;
      if (performance.now() - started > 60_000)
        throw new Error(`${entries[variant].api} did not answer /health 200 within 60 s`);
      await sleep(10);
    }
    const startMs = Math.round(performance.now() - started);
    const sample = { startMs, idleRssMb: await idleRss(api) };
    await stopAndWait(api);
    return sample;
  };
  const measureWorker = async (variant: Variant): Promise<Sample> => {
    const started = performance.now();
    const worker = startBenchProcess(
      entries[variant].worker,
      env({ WORKFLOW_BUNDLE_PATH: entries[variant].bundlePath }),
    );
    await worker.printed('worker polling task queue', 60_000, 10);
    const startMs = Math.round(performance.now() - started);
    const sample = { startMs, idleRssMb: await idleRss(worker) };
    await stopAndWait(worker);
    return sample;
  };

  const samples: Record<Variant, Record<Role, Sample[]>> = {
    tsx: { api: [], worker: [] },
    compiled: { api: [], worker: [] },
  };
  const loadBefore = os.loadavg()[0]!;
  for (let run = 0; run < RUNS; run++) {
    // Alternating which goes first, so that a drift of the machine does not favour one.
    for (const variant of (run % 2 === 0 ? ['tsx', 'compiled'] : ['compiled', 'tsx']) as Variant[]) {
      samples[variant].api.push(await measureApi(variant));
      samples[variant].worker.push(await measureWorker(variant));
      console.error(
        `run ${run + 1}/${RUNS} ${variant}: api ${samples[variant].api.at(-1)!.startMs} ms, worker ${samples[variant].worker.at(-1)!.startMs} ms`,
      );
    }
  }
  const result = {
    runs: RUNS,
    idleSeconds: IDLE_SECONDS,
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0]!.toFixed(2)) },
    buildSeconds,
    tsx: { api: summary(samples.tsx.api), worker: summary(samples.tsx.worker) },
    compiled: { api: summary(samples.compiled.api), worker: summary(samples.compiled.worker) },
  };
  const row = (label: string, variant: Variant, role: Role) => {
    const { startMs, idleRssMb } = result[variant][role];
    return `| ${label} | ${startMs.median} ms (${startMs.min}–${startMs.max}) | ${idleRssMb.median} MB (${idleRssMb.min}–${idleRssMb.max}) |`;
  };
  writeBenchResults('startup', result, [
    '# Start time and idle memory: tsx (before) and compiled (after)',
    '',
    `${RUNS} runs of each, alternating, in one run; Node ${process.version}, ${result.cpus} CPUs, load average ${result.loadAverage.before} at the start and ${result.loadAverage.after} at the end.`,
    'Start: spawn to /health 200 (API), spawn to the worker\'s "polling" line (worker, prebuilt bundle). Idle RSS: VmRSS after',
    `${IDLE_SECONDS} s with nothing to do. Servers: embedded PostgreSQL, Temporal dev server in memory. Median (min–max).`,
    '',
    '| process | start | idle RSS |',
    '|-|-|-|',
    row('API, `node --import tsx api/main.ts`', 'tsx', 'api'),
    row('API, `node dist/api/main.js`', 'compiled', 'api'),
    row('worker, `node --import tsx worker/main.ts`', 'tsx', 'worker'),
    row('worker, `node dist/worker/main.js`', 'compiled', 'worker'),
    '',
    `\`npm run build\` (type check, emit, workflow bundle) took ${buildSeconds} s in this run.`,
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(appDir, { recursive: true, force: true });
  await stop();
}
