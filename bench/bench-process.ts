import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '../scripts/stack/child-process';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { ensureDatabase } from '../scripts/stack/postgres';
import { projectRoot } from '../scripts/stack/paths';
import { memoryOf } from './measure';

export interface BenchProcess {
  pid: number;
  /** The node flags it was started with. */
  nodeArgs: readonly string[];
  memory(): { peakRssMb: number; rssMb: number };
  /** What it has written so far (stdout and stderr). */
  output(): string;
  /** Resolves once the process has written `text` (a worker's "polling" line): it is ready for work. */
  printed(text: string, timeoutMs?: number, pollMs?: number): Promise<void>;
  /** Ends the measurement: from now on the process's exit is expected. */
  stop(): void;
}

/**
 * A production entry point (worker/main.ts, api/main.ts) in its own process, as deployed, so that it
 * does not share an event loop with the load that measures it: a .ts entry through tsx, a compiled .js entry
 * (`npm run build`) with plain node. Its output is kept in a file; should it die before stop(), the whole
 * run fails naming that file instead of waiting forever for its work.
 */
export function startBenchProcess(
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  /** Another checkout to run the entry from (bench/carrier-ladder.ts's baseline); default this one. */
  cwd = projectRoot,
  /** Another node binary to run it on (bench/startup.ts's BENCH_BASELINE_NODE); default the bench's own. */
  node = process.execPath,
): BenchProcess {
  // worker/main.ts and worker/export-worker.ts may start in the same millisecond: each log is named by its entry.
  const compiled = entry.endsWith('.js');
  const name = `${compiled ? 'compiled-' : ''}${entry
    .replace(/\.[jt]s$/, '')
    .split(path.sep)
    .slice(-2)
    .join('-')}`;
  const log = path.join(os.tmpdir(), `bench-${name}-${process.pid}-${Date.now()}.log`);
  const output = openSync(log, 'w');
  const child = spawn(node, [...nodeArgs, ...(compiled ? [] : ['--import', 'tsx']), entry], {
    cwd,
    // info: the benches wait for the processes' start lines ("worker polling task queue"), JSON lines at info.
    // Payloads plain (TEMPORAL_PAYLOAD_ENCRYPTION=false; still decoded if sealed): the benches read their runs with
    // plain clients, as the tests do (test/support/worker-process.ts). The codec's own cost is bench/temporal-codec.ts's.
    // SIMULATORS billed: the benches dial and send through the simulators, charged as the tests do
    // (docs/configuration.md#simulators), unless the environment or the bench says otherwise.
    env: { SIMULATORS: 'billed', ...process.env, LOG_LEVEL: 'info', TEMPORAL_PAYLOAD_ENCRYPTION: 'false', ...env },
    stdio: ['ignore', output, output],
  });
  let stopped = false;
  child.once('exit', (code, signal) => {
    if (stopped) return;
    console.error(`${entry} exited (${signal ?? code}) before the measurement ended; its output: ${log}`);
    process.exit(1);
  });
  return {
    pid: child.pid!,
    nodeArgs,
    memory: () => memoryOf(child.pid!, (file) => readFileSync(file, 'utf8')),
    output: () => readFileSync(log, 'utf8'),
    async printed(text, timeoutMs = 60_000, pollMs = 100) {
      const deadline = Date.now() + timeoutMs;
      while (!readFileSync(log, 'utf8').includes(text)) {
        if (Date.now() > deadline)
          throw new Error(`${entry} did not print "${text}" within ${timeoutMs} ms; its output: ${log}`);
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
    stop() {
      stopped = true;
      child.kill('SIGTERM');
    },
  };
}

export function startBenchWorker(
  env: {
    databaseUrl: string;
    temporalAddress: string;
    taskQueue: string;
    bundlePath: string;
  },
  /** More of the worker's environment (a provider's address). */
  extra: Record<string, string> = {},
  nodeArgs: string[] = nodeArgsFromEnv('BENCH_WORKER_NODE_ARGS'),
): BenchProcess {
  return startBenchProcess(
    'worker/main.ts',
    {
      DATABASE_URL: env.databaseUrl,
      TEMPORAL_ADDRESS: env.temporalAddress,
      TEMPORAL_TASK_QUEUE: env.taskQueue,
      WORKFLOW_BUNDLE_PATH: env.bundlePath,
      ...extra,
    },
    nodeArgs,
  );
}

/** The export worker (worker/export-worker.ts) in its own process, writing its files into exportDir. */
export function startBenchExportWorker(env: {
  databaseUrl: string;
  temporalAddress: string;
  taskQueue: string;
  exportDir: string;
  /** More settings of the process (SECRETS_KEYS, SHEETS_GOOGLE_WRITES_PER_MINUTE, ...). */
  extra?: Record<string, string>;
}): BenchProcess {
  return startBenchProcess('worker/export-worker.ts', {
    DATABASE_URL: env.databaseUrl,
    TEMPORAL_ADDRESS: env.temporalAddress,
    TEMPORAL_TASK_QUEUE: env.taskQueue,
    EXPORT_DIR: env.exportDir,
    ...env.extra,
  });
}

/** Node flags for a measured process from a space-separated variable (profilers, heap limits). */
export function nodeArgsFromEnv(name: string): string[] {
  return (process.env[name] ?? '').split(' ').filter(Boolean);
}

/** Resolves once the API at apiUrl answers /health 200 (PostgreSQL and Temporal reached); fails after a minute. */
export const apiHealthy = (apiUrl: string) =>
  waitFor(
    'the API',
    async () => {
      if (!(await fetch(`${apiUrl}/health`)).ok) throw new Error('not healthy yet');
    },
    60_000,
  );

/**
 * The test stack (PostgreSQL and the Temporal CLI dev server, scripts/stack/ephemeral-stack.ts) with the
 * database `database` made from its migrated template, for benches that run the API or worker processes.
 * `started`: the measured processes, stopped at the end whatever happens (else they outlive a failed run).
 */
export async function startBenchStack(database: string) {
  const { stack, stop } = await startTestStack();
  const started: BenchProcess[] = [];
  process.once('exit', () => started.forEach((running) => running.stop()));
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void stop().finally(() => process.exit(1)));
  try {
    await ensureDatabase(stack.postgresAdminUrl, database, stack.templateDatabase);
  } catch (error) {
    await stop();
    throw error;
  }
  return { stack, stop, started, databaseUrl: stack.postgresAdminUrl.replace(/\/postgres$/, `/${database}`) };
}

/**
 * The simulated carrier (simulators/simulated-carrier/main.ts) in its own process on a free port, signing its
 * events with signingSecret, its time scaled by timeScale; resolves once it listens.
 */
export async function startBenchCarrier(databaseUrl: string, signingSecret: string, timeScale: number) {
  const port = await freePort();
  const carrier = startBenchProcess('simulators/simulated-carrier/main.ts', {
    DATABASE_URL: databaseUrl,
    SIMULATED_CARRIER_PORT: String(port),
    SIMULATED_CARRIER_SIGNING_SECRET: signingSecret,
    SIMULATED_CARRIER_TIME_SCALE: String(timeScale),
  });
  await carrier.printed('simulated carrier listening');
  return { carrier, url: `http://127.0.0.1:${port}` };
}
