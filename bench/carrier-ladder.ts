// `npm run bench:carrier-ladder`: the three-rung ladder of bench/leads.ts (busy numbers, 1 s rungs) on
// the asynchronous carrier path, next to the same campaign on the synchronous path it replaced, in one
// run on the same PostgreSQL and Temporal dev server. Writes bench/results/carrier-ladder.{json,md}.
//
//  - synchronous: the code of BASELINE_COMMIT (the last commit before the carrier path), checked out in a
//    temporary git worktree; its own Prisma client is generated into that worktree and its own workflows
//    are bundled from it; its API and worker run from it (bare imports resolved from this checkout's
//    node_modules by a resolve hook, RESOLVE_FROM_MAIN_HOOK below; nothing installed or linked into the worktree).
//    There a busy call's outcome is known the moment the provider is asked.
//  - asynchronous: this checkout's API, worker and simulated carrier, each its own process; the worker
//    dials the carrier over HTTP, the carrier POSTs signed events to the API, the API signals the lead.
//    SIMULATED_CARRIER_TIME_SCALE=1/3: a busy call rings from 0.33 s and is busy 1 s after the dial.
//
// BENCH_LEADS leads (default 10,000), pushed in batches of 100. Both databases are migrated with this
// checkout's migrations: the baseline's are a prefix of them, and the one migration added since only adds
// defaulted/nullable Call columns and a CHECK every baseline call satisfies.
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createJsonPoster } from './http-post';
import { cpuNow, cpuSecondsBetween, descendsFrom } from './measure';
import { apiHealthy, startBenchCarrier, startBenchProcess, nodeArgsFromEnv, type BenchProcess } from './bench-process';
import { createLadderCampaign, pushBusyLeads } from './ladder-campaign';
import { benchMachine, writeBenchResults } from './results-files';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { ensureDatabase } from '../scripts/stack/postgres';
import { freePort } from '../scripts/stack/child-process';
import { projectRoot } from '../scripts/stack/paths';

const LEADS = Number(process.env.BENCH_LEADS ?? 10_000);
const BASELINE_COMMIT = process.env.BENCH_BASELINE_COMMIT ?? '52248cb';
/** A busy call's timeline is queued 0 s, ringing 1 s, busy 3 s (simulators/simulated-carrier/timeline.ts). */
const TIME_SCALE = 1 / 3;
const SIGNING_SECRET = `bench-${randomUUID()}`;
const SAMPLE_MS = 250;
const run = promisify(execFile);
/**
 * Loaded with `node --import` by the baseline's processes: a bare import the worktree (which has no
 * node_modules of its own) cannot resolve is resolved from this checkout's node_modules instead, read
 * only; nothing is installed or linked into the worktree. Node's ESM loader ignores NODE_PATH, hence a
 * resolve hook. Written into the run's scratch folder as plain JavaScript, since it loads before tsx.
 */
const RESOLVE_FROM_MAIN_HOOK = [
  'export async function resolve(specifier, context, nextResolve) {',
  '  try {',
  '    return await nextResolve(specifier, context);',
  '  } catch (error) {',
  "    if (/^(\\.|\\/|[a-z]+:)/i.test(specifier) || error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;",
  `    return nextResolve(specifier, { ...context, parentURL: ${JSON.stringify(pathToFileURL(path.join(projectRoot, 'package.json')).href)} });`,
  '  }',
  '}',
].join('\n');

/** Writes the hook's registration into `dir`; answers the node flags that load it. */
function resolveFromMainFlags(dir: string): string[] {
  const file = path.join(dir, 'resolve-from-main.mjs');
  writeFileSync(
    file,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(RESOLVE_FROM_MAIN_HOOK)}`)});\n`,
  );
  return ['--import', file];
}

const worktreeIn = (dir: string) => path.join(dir, 'worktree');
/** The baseline checkout: a detached worktree, its Prisma client and its workflow bundle, all in `dir`. */
async function prepareBaseline(dir: string) {
  const worktree = worktreeIn(dir);
  await run('git', ['-C', projectRoot, 'worktree', 'add', '--detach', worktree, BASELINE_COMMIT]);
  const { stdout: commit } = await run('git', ['-C', worktree, 'rev-parse', 'HEAD']);
  // Generated from the worktree's own schema into the worktree's generated/ (its schema's output path);
  // a config in a folder of its own, so neither this checkout's config nor its generated/ is touched.
  const configDir = path.join(dir, 'prisma-config');
  rmSync(configDir, { recursive: true, force: true });
  await run('mkdir', ['-p', configDir]);
  writeFileSync(
    path.join(configDir, 'prisma.config.ts'),
    `export default { schema: ${JSON.stringify(path.join(worktree, 'prisma/schema.prisma'))}, experimental: { adapter: true }, engine: 'js', adapter: async () => { throw new Error('generate only'); } };\n`,
  );
  const ownGenerated = path.join(projectRoot, 'generated/prisma/client.ts');
  const ownGeneratedAt = statSync(ownGenerated).mtimeMs;
  await run(path.join(projectRoot, 'node_modules/.bin/prisma'), ['generate'], {
    cwd: configDir,
    env: { ...process.env, DATABASE_URL: 'postgresql://generate-only@localhost/unused' },
  });
  if (!existsSync(path.join(worktree, 'generated/prisma/client.ts')))
    throw new Error('the baseline Prisma client was not generated into its worktree');
  if (statSync(ownGenerated).mtimeMs !== ownGeneratedAt) throw new Error("this checkout's generated/ was touched");
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(worktree, 'workflows/index.ts'),
    webpackConfigHook: (config) => ({
      ...config,
      resolve: {
        ...config.resolve,
        modules: [...(config.resolve?.modules ?? ['node_modules']), path.join(projectRoot, 'node_modules')],
      },
    }),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  const bundlePath = path.join(dir, 'baseline-workflow-bundle.js');
  writeFileSync(bundlePath, code);
  return {
    worktree,
    commit: commit.trim(),
    bundlePath,
  };
}

interface Path {
  name: 'synchronous' | 'asynchronous';
  cwd: string;
  /** Node flags of the path's processes (the baseline's resolve hook). */
  nodeArgs: string[];
  bundlePath: string;
  /** Extra environment of the API and the worker, given the API's address. */
  env: (apiUrl: string) => Record<string, string>;
  /** Processes of the path besides the API and the worker (the simulated carrier). */
  companions: (databaseUrl: string) => Promise<{ processes: BenchProcess[]; env: Record<string, string> }>;
}

const { stack, stop } = await startTestStack();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'bench-carrier-ladder-'));
// A measured process that dies ends the run with process.exit (bench-process.ts), past any finally.
process.once('exit', () => {
  if (existsSync(worktreeIn(scratch)))
    execFileSync('git', ['-C', projectRoot, 'worktree', 'remove', '--force', worktreeIn(scratch)]);
});
try {
  const baseline = await prepareBaseline(scratch);
  const paths: Path[] = [
    {
      name: 'synchronous',
      cwd: baseline.worktree,
      nodeArgs: resolveFromMainFlags(scratch),
      bundlePath: baseline.bundlePath,
      // require() (createRequire in the docs route) honours NODE_PATH; import goes through the hook.
      env: () => ({ NODE_PATH: path.join(projectRoot, 'node_modules') }),
      companions: async () => ({ processes: [], env: {} }),
    },
    {
      name: 'asynchronous',
      cwd: projectRoot,
      nodeArgs: [],
      bundlePath: stack.workflowBundlePath,
      env: (apiUrl) => ({ SIMULATED_CARRIER_SIGNING_SECRET: SIGNING_SECRET, TELEPHONY_CALLBACK_BASE_URL: apiUrl }),
      companions: async (databaseUrl) => {
        const { carrier, url } = await startBenchCarrier(databaseUrl, SIGNING_SECRET, TIME_SCALE);
        return { processes: [carrier], env: { SIMULATED_CARRIER_URL: url } };
      },
    },
  ];

  const results = [];
  for (const ladderPath of paths) {
    const databaseName = `bench_${ladderPath.name}`;
    await ensureDatabase(stack.postgresAdminUrl, databaseName, stack.templateDatabase);
    const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, `/${databaseName}`);
    const db = createDatabase(databaseUrl, { poolSize: 4 });
    const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 100_000_000 });
    const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
      scopes: ['campaigns.edit'],
    });
    const taskQueue = `bench-${ladderPath.name}-${randomUUID()}`;
    const companions = await ladderPath.companions(databaseUrl);
    const apiPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const common = {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...companions.env,
      ...ladderPath.env(apiUrl),
    };
    const api = startBenchProcess(
      'api/main.ts',
      { ...common, PORT: String(apiPort), EXPORT_DIR: path.join(scratch, 'exports') },
      ladderPath.nodeArgs,
      ladderPath.cwd,
    );
    const worker = startBenchProcess(
      'worker/main.ts',
      { ...common, WORKFLOW_BUNDLE_PATH: ladderPath.bundlePath },
      [...ladderPath.nodeArgs, ...nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS')],
      ladderPath.cwd,
    );
    await apiHealthy(apiUrl);
    await worker.printed('worker polling');
    const client = createJsonPoster(apiUrl, { authorization: `Bearer ${key}` }, 4);
    const post = async (pathname: string, body: unknown, expected: number) => {
      const response = await client.post(pathname, body);
      if (response.status !== expected) throw new Error(`${pathname}: ${response.status} ${response.text}`);
    };
    const campaign = await createLadderCampaign(db, workspaceId, 'RUNNING');

    // In flight: the campaign's lines taken (Campaign.callsInFlight, a call dialed and not yet ended),
    // sampled every SAMPLE_MS while the ladder runs.
    let peakInFlight = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const row = await db.campaign.findUniqueOrThrow({
          where: { id: campaign.id },
          select: { callsInFlight: true },
        });
        peakInFlight = Math.max(peakInFlight, row.callsInFlight);
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      }
    })();
    const cpuBefore = cpuNow();
    const firstPush = performance.now();
    await pushBusyLeads(post, campaign.id, LEADS, randomUUID);
    const pushSeconds = (performance.now() - firstPush) / 1000;
    let finished = 0;
    let reportedAt = 0;
    while (finished < LEADS) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      finished = await db.lead.count({
        where: { campaignId: campaign.id, status: { in: ['completed', 'failed', 'cancelled'] } },
      });
      const seconds = Math.round((performance.now() - firstPush) / 1000);
      if (seconds - reportedAt >= 30) {
        reportedAt = seconds;
        console.error(
          `${ladderPath.name}: ${seconds} s, ${finished} of ${LEADS} leads finished, peak in flight ${peakInFlight}`,
        );
      }
    }
    const seconds = (performance.now() - firstPush) / 1000;
    sampling = false;
    await sampler;
    const measured = { worker, API: api, 'simulated carrier': companions.processes[0] };
    const cpuAfter = cpuNow();
    // The stack's PostgreSQL and Temporal dev server serve one path at a time (the paths run one after the
    // other), so their CPU in this interval is this path's too; found as descendants of this process.
    const cpuSeconds = cpuSecondsBetween(cpuBefore, cpuAfter, (pid, name) =>
      pid === process.pid
        ? 'bench (pushes, polling)'
        : (Object.entries(measured).find(([, p]) => p?.pid === pid)?.[0] ??
          (descendsFrom(cpuAfter, pid, process.pid) && name.startsWith('postgres')
            ? 'PostgreSQL'
            : descendsFrom(cpuAfter, pid, process.pid) && name.startsWith('temporal')
              ? 'Temporal dev server'
              : 'other')),
    );
    delete cpuSeconds.other;
    const memory = worker.memory();
    const calls = await db.call.count({ where: { campaignId: campaign.id } });
    // Where a lead's time goes: a call held (dial to end, a line taken), the wait from one call's end to
    // the lead's next dial (the 1 s rung delay plus the workflow's turn), and, on the asynchronous path,
    // how late the terminal event was recorded after the carrier's moment for it.
    const [timing] = await db.$queryRawUnsafe<Array<Record<string, number | null>>>(
      `WITH calls AS (
         SELECT extract(epoch FROM "endedAt" - "startedAt") AS held,
                extract(epoch FROM "startedAt" - lag("endedAt") OVER (PARTITION BY "leadId" ORDER BY attempt)) AS gap
           FROM "Call" WHERE "campaignId" = $1::uuid),
       events AS (
         SELECT extract(epoch FROM e."receivedAt" - e."occurredAt") AS lag
           FROM "CallEvent" e JOIN "Call" c ON c.id = e."callId"
          WHERE c."campaignId" = $1::uuid AND e.status IN ('busy', 'completed', 'no-answer', 'failed', 'canceled'))
       SELECT (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY held) FROM calls)::float AS "callHeldP50Seconds",
              (SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY held) FROM calls)::float AS "callHeldP90Seconds",
              (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY gap) FROM calls)::float AS "nextDialAfterEndP50Seconds",
              (SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY gap) FROM calls)::float AS "nextDialAfterEndP90Seconds",
              (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY lag) FROM events)::float AS "terminalEventLagP50Seconds",
              (SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY lag) FROM events)::float AS "terminalEventLagP90Seconds"`,
      campaign.id,
    );
    const timings = Object.fromEntries(
      Object.entries(timing!).map(([name, value]) => [name, value === null ? null : Number(value.toFixed(2))]),
    );
    const outcomes = await db.call.groupBy({ by: ['outcome'], where: { campaignId: campaign.id }, _count: true });
    for (const process of [worker, api, ...companions.processes]) process.stop();
    client.close();
    await db.$disconnect();
    const result = {
      path: ladderPath.name,
      leads: LEADS,
      calls,
      outcomes: Object.fromEntries(outcomes.map((row) => [row.outcome ?? 'none', row._count])),
      pushSeconds: Number(pushSeconds.toFixed(1)),
      firstPushToLastResultSeconds: Number(seconds.toFixed(1)),
      peakCallsInFlight: peakInFlight,
      /** CPU seconds each of the path's own processes spent from the first push to the last result. */
      cpuSeconds,
      timings,
      workerPeakRssMb: memory.peakRssMb,
      workerRssAtLastResultMb: memory.rssMb,
    };
    console.error(JSON.stringify(result));
    results.push(result);
    // The stopped processes let go of their ports and the CPU before the next path starts.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }

  const [sync, async] = results as [(typeof results)[0], (typeof results)[0]];
  const ratio = Number((async.firstPushToLastResultSeconds / sync.firstPushToLastResultSeconds).toFixed(3));
  const result = {
    measuredAt: new Date().toISOString(),
    machine: benchMachine(),
    setup: {
      leads: LEADS,
      rungs: 3,
      rungDelaySeconds: 1,
      phone: 'busy (ends in 5)',
      maxConcurrentCalls: 1000,
      baselineCommit: baseline.commit,
      timeScale: TIME_SCALE,
      busyCallSeconds: 3 * TIME_SCALE,
      temporal: 'dev server in memory (one history shard, SQLite)',
      workerNodeArgs: nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS').join(' '),
    },
    synchronous: sync,
    asynchronous: async,
    asyncOverSync: ratio,
    goal: { asyncOverSyncAtMost: 1.25 },
  };
  const cpuTotal = (r: typeof sync) =>
    Number(
      Object.values(r.cpuSeconds)
        .reduce((sum, seconds) => sum + seconds, 0)
        .toFixed(1),
    );
  const row = (r: typeof sync) =>
    `| ${r.path} | ${r.calls} | ${r.firstPushToLastResultSeconds} | ${r.peakCallsInFlight} | ${r.workerPeakRssMb} | ${r.workerRssAtLastResultMb} |`;
  writeBenchResults('carrier-ladder', result, [
    `# Carrier ladder benchmark (${result.measuredAt})`,
    '',
    ...(process.env.BENCH_NOTE ? [`**${process.env.BENCH_NOTE}**`, ''] : []),
    `${LEADS} leads through a three-rung ladder (busy numbers, 1 s rungs, cap 1000 lines) on both paths, one after the other in one run, on the same PostgreSQL and Temporal dev server (in memory); ${result.machine.cpus} CPUs shared by everything (load average at the end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}).`,
    '',
    `- synchronous: the code of ${baseline.commit.slice(0, 10)} (the last commit before the carrier path) from a temporary git worktree: the provider knows a call's outcome when asked.`,
    `- asynchronous: this checkout; the worker dials the simulated carrier (its own process) over HTTP, the carrier POSTs one signed event per call (busy: the default subscription is the answer, which a busy call never has, and the end) to the API, the API signals the lead. Time scale ${TIME_SCALE.toFixed(3)}: a busy call is busy ${result.setup.busyCallSeconds.toFixed(1)} s after its dial.`,
    '',
    '| path | calls | first push to last result, s | peak calls in flight | worker peak RSS MB | worker RSS at end MB |',
    '|-|-|-|-|-|-|',
    row(sync),
    row(async),
    '',
    `- Asynchronous / synchronous: **${ratio}x** (goal <= 1.25x).`,
    `- Peak in flight: the campaign's lines taken (Campaign.callsInFlight), sampled every ${SAMPLE_MS} ms.`,
    `- CPU seconds from first push to last result (the path's own processes, and the stack's PostgreSQL and Temporal dev server, which serve one path at a time): synchronous ${JSON.stringify(sync.cpuSeconds)}; asynchronous ${JSON.stringify(async.cpuSeconds)}.`,
    `- CPU seconds in all: synchronous ${cpuTotal(sync)}, asynchronous ${cpuTotal(async)} (${(cpuTotal(async) / cpuTotal(sync)).toFixed(3)}x): on ${result.machine.cpus} CPUs the wall time follows it.`,
    `- Timings, seconds (a call held from dial to end; a lead's next dial after its previous call ended, the 1 s rung delay included; the terminal event recorded after the carrier's moment for it): synchronous ${JSON.stringify(sync.timings)}; asynchronous ${JSON.stringify(async.timings)}.`,
    `- Outcomes: synchronous ${JSON.stringify(sync.outcomes)}; asynchronous ${JSON.stringify(async.outcomes)}.`,
    LEADS < 10_000
      ? `- **A small-scale run** (${LEADS} leads, not the issue's 10,000) on a machine shared with other engineers' test runs (see the load average): the figures show the shape, not the verdict. The issue's figure is BENCH_LEADS=10000 on a quiet machine (docs/benchmarks.md).`
      : '',
    '',
  ]);
  console.log(JSON.stringify(result));
} finally {
  if (existsSync(worktreeIn(scratch)))
    await run('git', ['-C', projectRoot, 'worktree', 'remove', '--force', worktreeIn(scratch)]).catch(
      (error: unknown) => console.error('removing the baseline worktree failed', error),
    );
  rmSync(scratch, { recursive: true, force: true });
  await stop();
}
process.exit(0);
