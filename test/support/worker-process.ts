import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, inject } from 'vitest';

const projectRoot = path.resolve(import.meta.dirname, '../..');

/**
 * The production worker entry point (worker/main.ts), each start its own process, for tests that kill it:
 * it polls the task queue given, over the test file's database, dials the carrier given and has its status
 * events sent to the API given. Whatever is still running at the end of the file is killed.
 */
export function workerProcesses(setup: {
  databaseUrl: string;
  taskQueue: string;
  carrierUrl: string;
  apiUrl: string;
  /** The simulated WhatsApp provider the worker sends messages through, when the test has one. */
  whatsappUrl?: string;
}): () => ChildProcess {
  const running = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL');
  });
  return () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
      cwd: projectRoot,
      env: {
        ...process.env,
        DATABASE_URL: setup.databaseUrl,
        TEMPORAL_ADDRESS: inject('stack').temporalAddress,
        TEMPORAL_TASK_QUEUE: setup.taskQueue,
        WORKFLOW_BUNDLE_PATH: inject('stack').workflowBundlePath,
        SIMULATED_CARRIER_URL: setup.carrierUrl,
        TELEPHONY_CALLBACK_BASE_URL: setup.apiUrl,
        ...(setup.whatsappUrl && { SIMULATED_WHATSAPP_URL: setup.whatsappUrl }),
      },
      stdio: 'ignore',
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    return child;
  };
}

/**
 * The export worker's entry point (worker/export-worker.ts: export jobs' and live sheets' activities),
 * each start its own process, polling the export task queue given and writing under `exportDir`.
 * Whatever is still running at the end of the file is killed.
 */
export function exportWorkerProcesses(setup: {
  databaseUrl: string;
  exportTaskQueue: string;
  exportDir: string;
}): () => ChildProcess {
  const running = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL');
  });
  return () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'worker/export-worker.ts'], {
      cwd: projectRoot,
      env: {
        ...process.env,
        DATABASE_URL: setup.databaseUrl,
        TEMPORAL_ADDRESS: inject('stack').temporalAddress,
        EXPORT_TASK_QUEUE: setup.exportTaskQueue,
        EXPORT_DIR: setup.exportDir,
      },
      stdio: 'ignore',
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    return child;
  };
}
