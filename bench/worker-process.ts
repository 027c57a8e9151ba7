import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../scripts/stack/paths';
import { memoryOf } from './measure';

export interface BenchProcess {
  pid: number;
  memory(): { peakRssMb: number; rssMb: number };
  /** Ends the measurement: from now on the process's exit is expected. */
  stop(): void;
}

/**
 * A production entry point (worker/main.ts, api/main.ts) in its own process, as deployed, so that it
 * does not share an event loop with the load that measures it. Its output is kept in a file; should it
 * die before stop(), the whole run fails naming that file instead of waiting forever for its work.
 */
export function startBenchProcess(entry: string, env: Record<string, string>, nodeArgs: string[] = []): BenchProcess {
  const name = path.basename(path.dirname(entry));
  const log = path.join(os.tmpdir(), `bench-${name}-${process.pid}-${Date.now()}.log`);
  const output = openSync(log, 'w');
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], {
    cwd: projectRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
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
    memory: () => memoryOf(child.pid!, (file) => readFileSync(file, 'utf8')),
    stop() {
      stopped = true;
      child.kill('SIGTERM');
    },
  };
}

export function startBenchWorker(env: { databaseUrl: string; temporalAddress: string; taskQueue: string; bundlePath: string }): BenchProcess {
  return startBenchProcess('worker/main.ts', {
    DATABASE_URL: env.databaseUrl, TEMPORAL_ADDRESS: env.temporalAddress, TEMPORAL_TASK_QUEUE: env.taskQueue, WORKFLOW_BUNDLE_PATH: env.bundlePath,
  });
}
