import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection } from '@temporalio/worker';
import { collectDefaultMetrics, register } from 'prom-client';
import { loadConfigOrExit } from '../lib/config';
import { configureLogging, log, secretsOfConfig } from '../lib/log';
import { serveMetrics } from '../lib/metrics/endpoint';
import { startTracing } from '../lib/tracing';
import { registerWorkerGauges } from './product-metrics';
import { installWorkerRuntime } from './runtime-telemetry';
import { createDatabase } from '../lib/database';
import { createCarrier, createWhatsAppProvider, createWhatsAppSender } from '../lib/providers';
import { createWorker } from './create-worker';
import { createSpeechWorker } from './create-speech-worker';
import { PocketsphinxTranscriber } from '../lib/speech/pocketsphinx';
import { SPEECH_DECODE_TIMEOUT_MS, SPEECH_LIMITS } from '../lib/speech/limits';
import { startHoldSweep } from './hold-sweep';
import { startCrmDeliverySweep } from './crm-delivery-sweep';
import { cachedWorkflowsForThisProcess } from './workflow-cache-size';

const config = loadConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'worker', secrets: secretsOfConfig(config) });
const tracing = startTracing(config, 'workspace-worker');
installWorkerRuntime({
  level: config.LOG_LEVEL,
  metrics:
    config.WORKER_SDK_METRICS_PORT === null
      ? null
      : { host: config.METRICS_HOST, port: config.WORKER_SDK_METRICS_PORT },
});
const db = createDatabase(config.DATABASE_URL);
collectDefaultMetrics({ register });
registerWorkerGauges(register, db);
const metrics =
  config.WORKER_METRICS_PORT === null
    ? null
    : await serveMetrics(register, { host: config.METRICS_HOST, port: config.WORKER_METRICS_PORT, name: 'worker' });
const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
// Workflows the activities start or signal (a campaign waking its leads) continue the activity's trace.
const temporal = new Client({
  connection: clientConnection,
  namespace: config.TEMPORAL_NAMESPACE,
  interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
});
const maxCachedWorkflows = config.WORKER_MAX_CACHED_WORKFLOWS ?? cachedWorkflowsForThisProcess();
const worker = await createWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
  options: { maxCachedWorkflows },
  tracing,
  dependencies: {
    db,
    calls: createCarrier(config),
    statusCallbackBaseUrl: config.TELEPHONY_CALLBACK_BASE_URL,
    ...(config.CALL_END_DEADLINE_SECONDS !== undefined && {
      callEndDeadlineMs: config.CALL_END_DEADLINE_SECONDS * 1000,
    }),
    whatsapp: createWhatsAppSender(config.WHATSAPP_PROVIDER, db),
    whatsappProvider: createWhatsAppProvider(config),
    statusCallbackEvents: config.TELEPHONY_STATUS_CALLBACK_EVENTS,
    temporal,
  },
});
const speechWorker = await createSpeechWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.SPEECH_TASK_QUEUE,
  slots: config.SPEECH_ANALYSIS_SLOTS,
  dependencies: {
    db,
    sox: { soxPath: config.SOX_PATH, timeoutMs: SPEECH_DECODE_TIMEOUT_MS },
    transcriber: new PocketsphinxTranscriber({ program: config.POCKETSPHINX_PATH }),
    limits: SPEECH_LIMITS,
  },
});
log.info(
  {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    temporalAddress: config.TEMPORAL_ADDRESS,
    telephony: config.TELEPHONY_PROVIDER,
    maxCachedWorkflows,
    speechTaskQueue: config.SPEECH_TASK_QUEUE,
    speechSlots: config.SPEECH_ANALYSIS_SLOTS,
  },
  'worker polling task queue',
);
// Credit holds whose operation died are settled by every worker, periodically (docs/features/credits.md, "The sweep").
const stopHoldSweep = startHoldSweep(db);
// Store deliveries whose processing could not start when they arrived
// (docs/features/commerce.md#connections-and-the-stores-webhooks).
const stopCrmDeliverySweep = startCrmDeliverySweep(db, temporal, config.TEMPORAL_TASK_QUEUE);
// Worker.run() shuts down gracefully on SIGINT/SIGTERM: in-flight activities finish or are retried elsewhere.
// Both run until SIGINT/SIGTERM, which each takes to shut down.
await Promise.all([worker.run(), speechWorker.run()]);
stopHoldSweep();
stopCrmDeliverySweep();
await connection.close();
await clientConnection.close();
await db.$disconnect();
await metrics?.close();
await tracing.shutdown();
