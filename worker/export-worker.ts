// The export worker: a process that runs only the export job's activities, polling EXPORT_TASK_QUEUE.
// Bulk exports read and write hundreds of MB; here they cannot grow the main worker's memory, and this
// process carries neither a workflow sandbox nor Prisma (docs/features/exports.md#the-export-worker).
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { databaseTimeoutsOf, loadConfigOrExit } from '../lib/config';
import { configureLogging, log, secretsOfConfig } from '../lib/log';
import { startTracing } from '../lib/tracing';
import { installWorkerRuntime } from './runtime-telemetry';
import { createSqlPool } from '../lib/sql-pool';
import { createExportWorker, EXPORT_WORKER_CONNECTIONS } from './create-export-worker';
import { handleStopSignals } from '../lib/shutdown';
import { temporalSetupOfConfig } from '../lib/temporal/connection';

const config = loadConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'export-worker', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
installWorkerRuntime({
  level: config.LOG_LEVEL,
  metrics:
    config.EXPORT_WORKER_SDK_METRICS_PORT === null
      ? null
      : { host: config.METRICS_HOST, port: config.EXPORT_WORKER_SDK_METRICS_PORT },
});
const tracing = startTracing(config, 'workspace-export-worker');
stop.defer('tracing', () => tracing.shutdown());
const sql = createSqlPool(config.DATABASE_URL, EXPORT_WORKER_CONNECTIONS, databaseTimeoutsOf(config));
stop.defer('database pool', () => sql.end());
const temporalSetup = temporalSetupOfConfig(config);
const connection = await NativeConnection.connect(temporalSetup.connectionOptions);
stop.defer('temporal worker connection', () => connection.close());
const worker = await createExportWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.EXPORT_TASK_QUEUE,
  dataConverter: temporalSetup.dataConverter,
  dependencies: { sql, exportDir: path.resolve(config.EXPORT_DIR) },
  sheets: {
    keyring: config.SECRETS_KEYS,
    pace: { writesPerMinute: config.SHEETS_GOOGLE_WRITES_PER_MINUTE, burst: config.SHEETS_GOOGLE_WRITE_BURST },
  },
  tracing,
  graceMs: config.SHUTDOWN_GRACE_MS,
});
log.info(
  { taskQueue: config.EXPORT_TASK_QUEUE, temporalAddress: config.TEMPORAL_ADDRESS },
  'export worker polling task queue',
);
// It runs until the stop shuts it down: a chunk in flight finishes or is retried from its last heartbeat.
const running = worker.run();
stop.defer('temporal worker', async () => {
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
});
// A worker that stops on its own (a fatal error) takes the process down the same way.
running.then(
  () => stop.stop('the temporal worker stopped'),
  (error: unknown) => {
    log.error({ err: error }, 'the temporal worker failed');
    stop.stop('the temporal worker failed', 1);
  },
);
