import { TEST_KEYRING } from './keyring';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Runtime, DefaultLogger, type Worker } from '@temporalio/worker';
import { afterAll, inject } from 'vitest';
import type { ActivityDependencies } from '../../activities';
import type { SqlPool } from '../../lib/sql-pool';
import { freePort } from '../../scripts/stack/child-process';
import { createExportWorker, type ExportWorkerSetup } from '../../worker/create-export-worker';
import { createWorker } from '../../worker/create-worker';
import { createSpeechWorker } from '../../worker/create-speech-worker';
import type { SpeechActivityDependencies } from '../../activities/speech/speech-analysis';
import { createSimulatedWhatsApp } from '../../lib/whatsapp/simulated-whatsapp';
import { defaultTestExportDir } from './export-dir';
import { testEgress } from './egress';

let runtimeInstalled = false;
export function quietRuntime() {
  if (runtimeInstalled) return;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
}

export function uniqueTaskQueue(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}

export interface TestTemporal {
  client: Client;
  connection: Connection;
  taskQueue: string;
}

/** A client of an address nothing listens on: every call fails as Temporal being unreachable, as in an outage. */
export async function unreachableTemporal(taskQueue: string): Promise<TestTemporal> {
  const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}`, connectTimeout: 500 });
  return { client: new Client({ connection }), connection, taskQueue };
}

/**
 * A client and a task queue of their own for one test file. `dataConverter`: the payload codec, as the product's
 * processes build it from SECRETS_KEYS (lib/temporal/connection.ts); the worker of the file must be given the same.
 */
export async function useTemporalClient(
  taskQueue = uniqueTaskQueue(),
  address = inject('stack').temporalAddress,
  dataConverter?: DataConverter,
): Promise<TestTemporal> {
  const connection = await Connection.connect({ address });
  afterAll(() => connection.close());
  return { client: new Client({ connection, dataConverter }), connection, taskQueue };
}

export interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}

/** Runs a worker until stop() or the end of the test file, then closes what it was given to close. */
function runUntilStopped(worker: Worker, close: () => Promise<void>): RunningWorker {
  const running = worker.run();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    worker.shutdown();
    await running;
    await close();
  };
  afterAll(stop);
  return { worker, stop };
}

/** A real worker on the test Temporal server, polling the given task queue, built from the shared bundle. */
export async function startTestWorker(
  taskQueue: string,
  activityDependencies: Omit<ActivityDependencies, 'temporal' | 'whatsapp'> &
    Partial<Pick<ActivityDependencies, 'whatsapp'>>,
  address = inject('stack').temporalAddress,
  dataConverter?: DataConverter,
): Promise<RunningWorker> {
  quietRuntime();
  const clientConnection = await Connection.connect({ address });
  const dependencies: ActivityDependencies = {
    whatsapp: createSimulatedWhatsApp(activityDependencies.db),
    egress: testEgress(),
    secretsKeyring: TEST_KEYRING,
    ...activityDependencies,
    temporal: new Client({ connection: clientConnection, dataConverter }),
  };
  const connection = await NativeConnection.connect({ address });
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue,
    dataConverter,
    dependencies,
    workflowBundlePath: inject('stack').workflowBundlePath,
  });
  return runUntilStopped(worker, async () => {
    await connection.close();
    await clientConnection.close();
  });
}

/**
 * A real export worker (activity-only, as worker/export-worker.ts builds it) polling an export task
 * queue; by default it writes to the test file's export directory, which its API serves.
 */
export async function startTestExportWorker(
  taskQueue: string,
  {
    sql,
    exportDir = defaultTestExportDir,
    sheets,
  }: { sql: SqlPool; exportDir?: string; sheets?: ExportWorkerSetup['sheets'] },
  address = inject('stack').temporalAddress,
): Promise<RunningWorker> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address });
  const worker = await createExportWorker({
    connection,
    namespace: 'default',
    taskQueue,
    dependencies: { sql, exportDir },
    sheets,
  });
  return runUntilStopped(worker, () => connection.close());
}

/** A real speech worker (activity-only, as worker/main.ts builds it beside the workflow worker) polling a speech task queue. */
export async function startTestSpeechWorker(
  taskQueue: string,
  dependencies: SpeechActivityDependencies,
  slots = 2,
  address = inject('stack').temporalAddress,
): Promise<RunningWorker> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address });
  const worker = await createSpeechWorker({ connection, namespace: 'default', taskQueue, slots, dependencies });
  return runUntilStopped(worker, () => connection.close());
}
