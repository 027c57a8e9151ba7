import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { bindActivities } from '../activities/bind-activities';
import {
  beginExport,
  completeExport,
  expireExport,
  failExport,
  packageExportXlsx,
  writeExportChunk,
  type ExportActivityDependencies,
} from '../activities/exports/exports';
import {
  failSheetSync,
  removeSheetFiles,
  resetSheet,
  syncSheetChunk,
  type SheetActivityDependencies,
} from '../activities/sheets/sheets';
import { LocalSpreadsheetProvider, localSheetsDir } from '../lib/sheets/local-provider';
import { workerStopTimes } from '../lib/shutdown';
import type { Tracing } from '../lib/tracing';
import { tracingWorkerOptions } from './tracing-interceptors';

/**
 * Export activities one export worker runs at a time. Each running chunk holds one page of rows and its
 * encoded lines, and writes as fast as PostgreSQL and the disk let it: a few at a time already keep a
 * machine's cores busy, and more would only add their pages to the process's memory. Further jobs wait
 * in Temporal's task queue, where they cost nothing, until a slot (or another export worker) is free.
 */
export const EXPORT_ACTIVITY_SLOTS = 4;

/** A running chunk holds two connections: its advisory lock's transaction, and its reads and progress updates. */
export const EXPORT_WORKER_CONNECTIONS = 2 * EXPORT_ACTIVITY_SLOTS;

const EXPORT_SHUTDOWN_GRACE_MS = 10_000;

export interface ExportWorkerSetup {
  /** The payload codec under SECRETS_KEYS (lib/temporal/connection.ts temporalSetupOfConfig); unset: plain payloads. */
  dataConverter?: DataConverter;
  connection: NativeConnection;
  namespace: string;
  /** EXPORT_TASK_QUEUE: where export job workflows send their activities. */
  taskQueue: string;
  dependencies: ExportActivityDependencies;
  /** Live sheets on Google: the key ring (SECRETS_KEYS) and the write pace (docs/features/sheets.md#quota). */
  sheets?: SheetActivityDependencies['google'];
  /** Where the activities' spans go (lib/tracing.ts); unset: no activity interceptors. */
  tracing?: Pick<Tracing, 'spanProcessor' | 'resource'>;
  /** SHUTDOWN_GRACE_MS of the process: its drain stays inside it (lib/shutdown.ts); unset, no force time. */
  graceMs?: number;
}

/**
 * An activity-only worker: with neither workflowsPath nor workflowBundle it starts no workflow sandbox
 * and loads no workflow code, and its activities use plain pg, so it carries no Prisma either.
 */
export async function createExportWorker(setup: ExportWorkerSetup): Promise<Worker> {
  return Worker.create({
    connection: setup.connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    dataConverter: setup.dataConverter,
    // The export worker's one place that binds its activities, by the names Temporal registers them under. Live sheets
    // page through campaigns and write files as exports do: same worker, same volume.
    activities: {
      ...bindActivities(setup.dependencies, {
        beginExport,
        writeExportChunk,
        packageExportXlsx,
        completeExport,
        failExport,
        expireExport,
      }),
      ...bindActivities(
        {
          sql: setup.dependencies.sql,
          provider: new LocalSpreadsheetProvider(localSheetsDir(setup.dependencies.exportDir)),
          google: setup.sheets,
        },
        { syncSheetChunk, resetSheet, failSheetSync, removeSheetFiles },
      ),
    },
    // Activity-only: the activity interceptors, no workflow sinks.
    ...(setup.tracing && { interceptors: tracingWorkerOptions(setup.tracing).interceptors }),
    maxConcurrentActivityTaskExecutions: EXPORT_ACTIVITY_SLOTS,
    // A chunk works about 3 s: on shutdown it is let finish and hand its checkpoint to the workflow,
    // instead of being cancelled and retried from its last heartbeat (up to half of SHUTDOWN_GRACE_MS).
    ...(setup.graceMs === undefined
      ? { shutdownGraceTime: EXPORT_SHUTDOWN_GRACE_MS }
      : workerStopTimes(setup.graceMs, EXPORT_SHUTDOWN_GRACE_MS)),
  });
}
