import type { ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { startTestApi } from './api';
import { startTestCarrier } from './carrier';
import { useTestDatabase } from './database';
import { startEntryPoint } from './processes';
import { uniqueTaskQueue, useTemporalClient } from './temporal';
import { createTestWorkspace } from './workspace';

/**
 * An entry point of the project, each start its own process with `env` over this one's: for tests that kill
 * it. Each is killed when the test that started it finishes (at the end of the file when started outside a
 * test: test/support/processes.ts).
 */
function entryPointProcesses(entry: string, env: () => Record<string, string>): () => ChildProcess {
  return () =>
    startEntryPoint(
      entry,
      { TEMPORAL_ADDRESS: inject('stack').temporalAddress, ...PLAIN_TEST_PAYLOADS, ...env() },
      { output: 'ignore' },
    ).child;
}

/**
 * The payloads of a test's processes: written in plain text even when the test
 * gives SECRETS_KEYS (for carrier secrets), since the test file's own client reads their runs without the codec.
 * Sealed payloads still decode (TEMPORAL_PAYLOAD_ENCRYPTION=false); test/temporal/ covers the codec itself.
 */
export const PLAIN_TEST_PAYLOADS = { TEMPORAL_PAYLOAD_ENCRYPTION: 'false' } as const;

/**
 * The production worker entry point (worker/main.ts): it polls the task queue given, over the test file's
 * database, dials the carrier given and has its status events sent to the API given.
 */
export function workerProcesses(setup: {
  databaseUrl: string;
  taskQueue: string;
  carrierUrl: string;
  apiUrl: string;
  /** The simulated WhatsApp provider the worker sends messages through, when the test has one. */
  whatsappUrl?: string;
  /** More variables (metrics ports, the OTLP endpoint...). */
  env?: Record<string, string>;
}): () => ChildProcess {
  return entryPointProcesses('worker/main.ts', () => ({
    DATABASE_URL: setup.databaseUrl,
    TEMPORAL_TASK_QUEUE: setup.taskQueue,
    WORKFLOW_BUNDLE_PATH: inject('stack').workflowBundlePath,
    SIMULATED_CARRIER_URL: setup.carrierUrl,
    TELEPHONY_CALLBACK_BASE_URL: setup.apiUrl,
    ...(setup.whatsappUrl && { SIMULATED_WHATSAPP_URL: setup.whatsappUrl }),
    ...setup.env,
  }));
}

/**
 * The export worker's entry point (worker/export-worker.ts: export jobs' and live sheets' activities),
 * polling the export task queue given and writing under `exportDir`.
 */
export function exportWorkerProcesses(setup: {
  databaseUrl: string;
  exportTaskQueue: string;
  exportDir: string;
}): () => ChildProcess {
  return entryPointProcesses('worker/export-worker.ts', () => ({
    DATABASE_URL: setup.databaseUrl,
    EXPORT_TASK_QUEUE: setup.exportTaskQueue,
    EXPORT_DIR: setup.exportDir,
  }));
}

/**
 * What a crash test stands on (test/worker-crash.test.ts, test/credits/credits-crash.test.ts): the file's database,
 * its task queue, the API, the simulated carrier over HTTP in this process (calls ring 60 ms and talk
 * 300-390 ms, so a worker dies while calls ring, talk and end), a workspace with `scopes`, and the
 * production worker as processes of their own polling that queue (`carrierTimeScale`: a slower carrier, for tests
 * that need calls spread apart). Call it at the top of the file.
 */
export async function crashTestStack(name: string, scopes: string[], options: { carrierTimeScale?: number } = {}) {
  const { db, url } = await useTestDatabase();
  const temporal = await useTemporalClient(uniqueTaskQueue(name));
  const api = await startTestApi({ db, url, temporal });
  const carrier = await startTestCarrier(db, { timeScale: options.carrierTimeScale ?? 0.01 });
  const owner = await createTestWorkspace(db, { scopes });
  const startWorkerProcess = workerProcesses({
    databaseUrl: url,
    taskQueue: temporal.taskQueue,
    carrierUrl: carrier.baseUrl,
    apiUrl: api.baseUrl,
  });
  return { db, temporal, api, owner, startWorkerProcess };
}

/** Kills a worker process with SIGKILL, as a crash would, and waits until it is gone. */
export async function killWorker(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
