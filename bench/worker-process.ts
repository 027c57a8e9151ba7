import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../scripts/stack/paths';
import { memoryOf } from './measure';

export interface BenchWorker {
  memory(): { peakRssMb: number; rssMb: number };
  /** Ends the measurement: from now on the worker's exit is expected. */
  stop(): void;
}

/**
 * The production worker in its own process, as deployed. Its output is kept in a file; should it die
 * before stop(), the whole run fails naming that file instead of waiting forever for its work.
 */
export function startBenchWorker(env: { databaseUrl: string; temporalAddress: string; taskQueue: string; bundlePath: string }): BenchWorker {
  const log = path.join(os.tmpdir(), `bench-worker-${process.pid}-${Date.now()}.log`);
  const output = openSync(log, 'w');
  const worker = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: projectRoot,
    env: {
      ...process.env, DATABASE_URL: env.databaseUrl, TEMPORAL_ADDRESS: env.temporalAddress, TEMPORAL_TASK_QUEUE: env.taskQueue,
      WORKFLOW_BUNDLE_PATH: env.bundlePath, LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', output, output],
  });
  let stopped = false;
  worker.once('exit', (code, signal) => {
    if (stopped) return;
    console.error(`the worker exited (${signal ?? code}) before the measurement ended; its output: ${log}`);
    process.exit(1);
  });
  return {
    memory: () => memoryOf(worker.pid!, (file) => readFileSync(file, 'utf8')),
    stop() {
      stopped = true;
      worker.kill('SIGTERM');
    },
  };
}
