// The export worker: a process that runs only the export job's activities, polling EXPORT_TASK_QUEUE.
// Bulk exports read and write hundreds of MB; here they cannot grow the main worker's memory, and this
// process carries neither a workflow sandbox nor Prisma (docs/features/exports.md#the-export-worker).
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { loadConfigOrExit } from '../lib/config';
import { configureLogging, log, secretsOfConfig } from '../lib/log';
import { startTracing } from '../lib/tracing';
import { installWorkerRuntime } from './runtime-telemetry';
import { createSqlPool } from '../lib/sql-pool';
import { createExportWorker, EXPORT_WORKER_CONNECTIONS } from './create-export-worker';

const config = loadConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'export-worker', secrets: secretsOfConfig(config) });
installWorkerRuntime({
  level: config.LOG_LEVEL,
  metrics:
    config.EXPORT_WORKER_SDK_METRICS_PORT === null
      ? null
      : { host: config.METRICS_HOST, port: config.EXPORT_WORKER_SDK_METRICS_PORT },
});
const tracing = startTracing(config, 'workspace-export-worker');
const sql = createSqlPool(config.DATABASE_URL, EXPORT_WORKER_CONNECTIONS);
const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
const worker = await createExportWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.EXPORT_TASK_QUEUE,
  dependencies: { sql, exportDir: path.resolve(config.EXPORT_DIR) },
  tracing,
});
log.info(
  { taskQueue: config.EXPORT_TASK_QUEUE, temporalAddress: config.TEMPORAL_ADDRESS },
  'export worker polling task queue',
);
// Worker.run() shuts down gracefully on SIGINT/SIGTERM: a chunk in flight finishes or is retried from its last heartbeat.
await worker.run();
await connection.close();
await sql.end();
await tracing.shutdown();
