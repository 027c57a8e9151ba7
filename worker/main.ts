import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection } from '@temporalio/worker';
import { collectDefaultMetrics, register } from 'prom-client';
import { databaseTimeoutsOf, calendarEndpointsOf, egressSettings, loadConfigOrExit } from '../lib/config';
import { createEgress } from '../lib/http/egress';
import { configureLogging, log, secretsOfConfig } from '../lib/log';
import { serveMetrics } from '../lib/metrics/endpoint';
import { startTracing } from '../lib/tracing';
import { registerWorkerGauges } from './product-metrics';
import { installWorkerRuntime } from './runtime-telemetry';
import { createDatabase } from '../lib/database';
import {
  callIntelligenceModelFromConfig,
  createCarrier,
  createWhatsAppProvider,
  createWhatsAppSender,
} from '../lib/providers';
import { createWorker } from './create-worker';
import { temporalSetupOfConfig } from '../lib/temporal/connection';
import { createSpeechWorker } from './create-speech-worker';
import { PocketsphinxTranscriber } from '../lib/speech/pocketsphinx';
import { SPEECH_DECODE_TIMEOUT_MS, SPEECH_LIMITS } from '../lib/speech/limits';
import { startHoldSweep } from './hold-sweep';
import { startCrmDeliverySweep } from './crm-delivery-sweep';
import { startRecordingRetentionSweep } from './recording-retention-sweep';
import { cachedWorkflowsForThisProcess } from './workflow-cache-size';
import { handleStopSignals, workerStopTimes } from '../lib/shutdown';
import { createCpuBudget } from '../lib/cpu-budget/cpu-budget';

const config = loadConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'worker', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
const tracing = startTracing(config, 'workspace-worker');
stop.defer('tracing', () => tracing.shutdown());
installWorkerRuntime({
  level: config.LOG_LEVEL,
  metrics:
    config.WORKER_SDK_METRICS_PORT === null
      ? null
      : { host: config.METRICS_HOST, port: config.WORKER_SDK_METRICS_PORT },
});
const db = createDatabase(config.DATABASE_URL, { timeouts: databaseTimeoutsOf(config) });
stop.defer('database', () => db.$disconnect());
collectDefaultMetrics({ register });
registerWorkerGauges(register, db);
const metrics =
  config.WORKER_METRICS_PORT === null
    ? null
    : await serveMetrics(register, { host: config.METRICS_HOST, port: config.WORKER_METRICS_PORT, name: 'worker' });
stop.defer('metrics endpoint', () => metrics?.close());
// TLS, mTLS or an API key as configured; every payload sealed by the codec under SECRETS_KEYS (lib/temporal/connection.ts).
const temporalSetup = temporalSetupOfConfig(config);
const connection = await NativeConnection.connect(temporalSetup.connectionOptions);
stop.defer('temporal worker connection', () => connection.close());
const clientConnection = await Connection.connect(temporalSetup.connectionOptions);
stop.defer('temporal client connection', () => clientConnection.close());
// When traced, workflows the activities start or signal (a campaign waking its leads) continue the activity's trace;
// untraced, as in the API, the interceptor would only build no-op spans.
const temporal = new Client({
  connection: clientConnection,
  namespace: config.TEMPORAL_NAMESPACE,
  dataConverter: temporalSetup.dataConverter,
  interceptors: tracing.exporting ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : {},
});
const maxCachedWorkflows = config.WORKER_MAX_CACHED_WORKFLOWS ?? cachedWorkflowsForThisProcess();
const worker = await createWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  dataConverter: temporalSetup.dataConverter,
  workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
  options: { maxCachedWorkflows, ...workerStopTimes(config.SHUTDOWN_GRACE_MS) },
  // Untraced unless an OTLP endpoint is set: then the worker loads the bundle with the tracing interceptors.
  tracing: tracing.exporting ? tracing : undefined,
  workflowStackTraces: config.WORKFLOW_STACK_TRACES,
  dependencies: {
    db,
    calls: createCarrier(config, db),
    statusCallbackBaseUrl: config.TELEPHONY_CALLBACK_BASE_URL,
    ...(config.CALL_END_DEADLINE_SECONDS !== undefined && {
      callEndDeadlineMs: config.CALL_END_DEADLINE_SECONDS * 1000,
    }),
    whatsapp: createWhatsAppSender(config, db),
    whatsappProvider: createWhatsAppProvider(config, db),
    simulators: config.SIMULATORS,
    whatsappResendAfterMs: config.WHATSAPP_RESEND_AFTER_SECONDS * 1000,
    whatsappAmbiguousResend: config.WHATSAPP_AMBIGUOUS_RESEND,
    statusCallbackEvents: config.TELEPHONY_STATUS_CALLBACK_EVENTS,
    callIntelligenceModel: callIntelligenceModelFromConfig(config),
    cpuBudget: createCpuBudget({ threads: config.WORKER_CPU_THREADS, budgetMs: config.WORKER_CPU_BUDGET_MS }),
    temporal,
    secretsKeyring: config.SECRETS_KEYS,
    egress: createEgress(egressSettings(config)),
    calendarEndpoints: calendarEndpointsOf(config),
  },
});
const speechWorker = await createSpeechWorker({
  connection,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.SPEECH_TASK_QUEUE,
  dataConverter: temporalSetup.dataConverter,
  slots: config.SPEECH_ANALYSIS_SLOTS,
  graceMs: config.SHUTDOWN_GRACE_MS,
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
    telephony: config.FALLBACK_CARRIER,
    simulators: config.SIMULATORS,
    maxCachedWorkflows,
    workflowStackTraces: config.WORKFLOW_STACK_TRACES,
    speechTaskQueue: config.SPEECH_TASK_QUEUE,
    speechSlots: config.SPEECH_ANALYSIS_SLOTS,
    intelligence: config.INTELLIGENCE_PROVIDER,
  },
  'worker polling task queue',
);
// Both run until the stop shuts them down: in-flight activities finish or are retried elsewhere.
const running = Promise.all([worker.run(), speechWorker.run()]);
stop.defer('temporal workers', async () => {
  for (const each of [worker, speechWorker]) if (each.getState() === 'RUNNING') each.shutdown();
  await running;
});
// Credit holds whose operation died are settled by every worker, periodically (docs/features/credits.md, "The sweep").
stop.defer('hold sweep', startHoldSweep(db));
// Store deliveries whose processing could not start when they arrived (docs/features/commerce.md#connections-and-the-stores-webhooks).
stop.defer('crm delivery sweep', startCrmDeliverySweep(db, temporal, config.TEMPORAL_TASK_QUEUE));
// Call recordings past their workspace's retention are deleted, at the carrier too (docs/features/recordings.md#retention).
// Without SECRETS_KEYS no carrier connection can be opened, so none has recorded a call.
if (config.SECRETS_KEYS) stop.defer('recording retention sweep', startRecordingRetentionSweep(db, config.SECRETS_KEYS));
// A worker that stops on its own (a fatal error) takes the process down the same way.
running.then(
  () => stop.stop('the temporal workers stopped'),
  (error: unknown) => {
    log.error({ err: error }, 'a temporal worker failed');
    stop.stop('a temporal worker failed', 1);
  },
);
