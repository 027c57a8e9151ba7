// `npm run bench:startup`: how long the API and the worker take to start, and their resident memory idle, run
// as production ran them before the build existed (TypeScript through tsx: `node --import tsx api/main.ts`) and
// as the image runs them now (`npm run build`, then `node dist/api/main.js`), alternating in one run on the same
// servers (an embedded PostgreSQL and the Temporal dev server in memory, as the tests use). Start: from the spawn
// to /health answering 200 (the API, with PostgreSQL and Temporal up), to the worker's "polling" line
// (Worker.create done with its prebuilt workflow bundle: the tsx worker loads one bundled from the sources, the
// compiled worker dist/workflow-bundle.js). Idle RSS: VmRSS after BENCH_IDLE_SECONDS (default 10) with nothing
// to do. BENCH_RUNS (default 5) runs of each. Writes bench/results/startup.json and .md.
//
// BENCH_BASELINE_NODE=/usr/bin/node (another node binary): both, tsx and compiled, on that node and on the one
// running the bench (the pinned one, docs/runtime.md), all four alternating in the same run; writes
// bench/results/startup-nodes.json and .md instead.
import { execFileSync } from 'node:child_process';
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

type Build = 'tsx' | 'compiled';
type Role = 'api' | 'worker';
/** A way of running the API and the worker: through tsx or compiled, on one node binary. */
interface Variant {
  build: Build;
  node: string;
  nodeVersion: string;
}
const BASELINE_NODE = process.env.BENCH_BASELINE_NODE;
const nodeVersionOf = (node: string) => execFileSync(node, ['--version']).toString().trim();
const nodes = BASELINE_NODE ? [BASELINE_NODE, process.execPath] : [process.execPath];
const variants: Variant[] = nodes.flatMap((node) =>
  (['tsx', 'compiled'] as const).map((build) => ({ build, node, nodeVersion: nodeVersionOf(node) })),
);
if (BASELINE_NODE && variants[0]!.nodeVersion === process.version)
  throw new Error(`BENCH_BASELINE_NODE ${BASELINE_NODE} is ${process.version} too: nothing to compare`);
const keyOf = (variant: Variant) => `${variant.nodeVersion} ${variant.build}`;
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
  const entries: Record<Build, Record<Role, string> & { bundlePath: string }> = {
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

  const measureApi = async ({ build, node }: Variant): Promise<Sample> => {
    const port = await freePort();
    const started = performance.now();
    const api = startBenchProcess(entries[build].api, env({ PORT: String(port) }), [], undefined, node);
    for (;;) {
      const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
        (response) => response.status,
        () => 0,
      );
      if (answered === 200) break;
      if (performance.now() - started > 60_000)
        throw new Error(`${entries[build].api} on ${node} did not answer /health 200 within 60 s`);
      await sleep(10);
    }
    const startMs = Math.round(performance.now() - started);
    const sample = { startMs, idleRssMb: await idleRss(api) };
    await stopAndWait(api);
    return sample;
  };
  const measureWorker = async ({ build, node }: Variant): Promise<Sample> => {
    const started = performance.now();
    const worker = startBenchProcess(
      entries[build].worker,
      env({ WORKFLOW_BUNDLE_PATH: entries[build].bundlePath }),
      [],
      undefined,
      node,
    );
    await worker.printed('worker polling task queue', 60_000, 10);
    const startMs = Math.round(performance.now() - started);
    const sample = { startMs, idleRssMb: await idleRss(worker) };
    await stopAndWait(worker);
    return sample;
  };

  const samples = new Map<Variant, Record<Role, Sample[]>>(
    variants.map((variant) => [variant, { api: [], worker: [] }]),
  );
  const loadBefore = os.loadavg()[0]!;
  for (let run = 0; run < RUNS; run++) {
    // Alternating which goes first, so that a drift of the machine does not favour one.
    for (const variant of run % 2 === 0 ? variants : [...variants].reverse()) {
      const measured = samples.get(variant)!;
      measured.api.push(await measureApi(variant));
      measured.worker.push(await measureWorker(variant));
      console.error(
        `run ${run + 1}/${RUNS} ${keyOf(variant)}: api ${measured.api.at(-1)!.startMs} ms, worker ${measured.worker.at(-1)!.startMs} ms`,
      );
    }
  }
  const summaries = new Map(
    variants.map((variant) => {
      const measured = samples.get(variant)!;
      return [variant, { api: summary(measured.api), worker: summary(measured.worker) }] as const;
    }),
  );
  const loadAverage = { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0]!.toFixed(2)) };
  const cell = (variant: Variant, role: Role, figure: 'startMs' | 'idleRssMb') => {
    const { median, min, max } = summaries.get(variant)![role][figure];
    return figure === 'startMs' ? `${median} ms (${min}–${max})` : `${median} MB (${min}–${max})`;
  };
  const variantOf = (build: Build, node = process.execPath) =>
    variants.find((variant) => variant.build === build && variant.node === node)!;
  const result = BASELINE_NODE ? nodesResult() : buildsResult();
  function buildsResult() {
    const result = {
      runs: RUNS,
      idleSeconds: IDLE_SECONDS,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage,
      buildSeconds,
      tsx: summaries.get(variantOf('tsx'))!,
      compiled: summaries.get(variantOf('compiled'))!,
    };
    const row = (label: string, build: Build, role: Role) =>
      `| ${label} | ${cell(variantOf(build), role, 'startMs')} | ${cell(variantOf(build), role, 'idleRssMb')} |`;
    writeBenchResults('startup', result, [
      '# Start time and idle memory: tsx (before) and compiled (after)',
      '',
      `${RUNS} runs of each, alternating, in one run; Node ${process.version}, ${result.cpus} CPUs, load average ${loadAverage.before} at the start and ${loadAverage.after} at the end.`,
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
    return result;
  }
  function nodesResult() {
    const [before, after] = [variantOf('tsx', BASELINE_NODE).nodeVersion, process.version];
    const result = {
      runs: RUNS,
      idleSeconds: IDLE_SECONDS,
      nodes: { before: { version: before, path: BASELINE_NODE }, after: { version: after, path: process.execPath } },
      cpus: os.cpus().length,
      loadAverage,
      buildSeconds,
      variants: Object.fromEntries(variants.map((variant) => [keyOf(variant), summaries.get(variant)!])),
    };
    const row = (label: string, build: Build, role: Role) => {
      const [old, now] = [variantOf(build, BASELINE_NODE), variantOf(build)];
      return `| ${label} | ${cell(old, role, 'startMs')} | ${cell(now, role, 'startMs')} | ${cell(old, role, 'idleRssMb')} | ${cell(now, role, 'idleRssMb')} |`;
    };
    writeBenchResults('startup-nodes', result, [
      `# Start time and idle memory: Node ${before} (before) and Node ${after} (after)`,
      '',
      `${RUNS} runs of each of the four (two nodes, tsx and compiled), alternating, in one run; ${result.cpus} CPUs, load average ${loadAverage.before} at the start and ${loadAverage.after} at the end.`,
      'Start: spawn to /health 200 (API), spawn to the worker\'s "polling" line (worker, prebuilt bundle). Idle RSS: VmRSS after',
      `${IDLE_SECONDS} s with nothing to do. Servers: embedded PostgreSQL, Temporal dev server in memory. Median (min–max).`,
      '',
      `| process | start, ${before} | start, ${after} | idle RSS, ${before} | idle RSS, ${after} |`,
      '|-|-|-|-|-|',
      row('API, `node dist/api/main.js`', 'compiled', 'api'),
      row('worker, `node dist/worker/main.js`', 'compiled', 'worker'),
      row('API, `node --import tsx api/main.ts`', 'tsx', 'api'),
      row('worker, `node --import tsx worker/main.ts`', 'tsx', 'worker'),
      '',
      `The compiled build (\`npm run build\`, ${buildSeconds} s in this run) is what the image runs; tsx is what \`npm start\` runs.`,
      '',
    ]);
    return result;
  }
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(appDir, { recursive: true, force: true });
  await stop();
}
