import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { collectDefaultMetrics, register } from 'prom-client';
import { databaseTimeoutsOf, calendarEndpointsOf, egressSettings, loadConfigOrExit } from '../lib/config';
import { createEgress } from '../lib/http/egress';
import { configureLogging, log, secretsOfConfig } from '../lib/log';
import { serveMetrics } from '../lib/metrics/endpoint';
import { startTracing } from '../lib/tracing';
import { registerLeadOutboxMetrics } from './http/request-metrics';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { createApp } from './app';
import { createLeadDispatcher } from '../lib/temporal/lead-dispatch';
import { temporalSetupOfConfig } from '../lib/temporal/connection';
import { EncryptionCodec } from '../lib/temporal/payload-codec';
import { createStartQueue } from '../lib/temporal/start-queue';
import { EXPORT_PAGE_ROWS } from './exports/exports';
import { trimApiLogs } from './campaign-data/api-logs';
import { backgroundAudioFromConfig } from './background-audio/background-audio';
import { SPEECH_DECODE_TIMEOUT_MS } from '../lib/speech/limits';
import { voicePreviewsFromConfig } from './voices/voice-previews';
import { chatProviderFromConfig, createWhatsAppProvider, translatorFromConfig } from '../lib/providers';
import { handleStopSignals, stopHttpServer } from '../lib/shutdown';
import type { AppServices } from './app-services';
import { createQuestionWaitSweep } from './carriers/telnyx-question-waits';
import { attachConversationRelay } from './carriers/relay-socket';
import { routeUpgrades } from './http/upgrade-routes';
import { attachTestSessionSockets, isTestSessionSocket } from './test-sessions/session-socket';

const config = loadConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'api', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
const tracing = startTracing(config, 'workspace-api');
stop.defer('tracing', () => tracing.shutdown());
const db = createDatabase(config.DATABASE_URL, { timeouts: databaseTimeoutsOf(config) });
stop.defer('database', () => db.$disconnect());
const sql = createSqlPool(config.DATABASE_URL, undefined, databaseTimeoutsOf(config));
stop.defer('database pool', () => sql.end());
// Lazy: the API starts, and /health reports it, while Temporal is still coming up or is down.
// TLS, mTLS or an API key as configured; every payload sealed by the codec under SECRETS_KEYS (lib/temporal/connection.ts).
const temporalSetup = temporalSetupOfConfig(config);
const temporalConnection = Connection.lazy(temporalSetup.connectionOptions);
stop.defer('temporal connection', () => temporalConnection.close());
// When traced, the interceptor carries the request's span into every workflow the API starts or signals. Untraced, it
// would only build no-op spans and empty headers for each start and signal: about 4 % of the API's CPU per lead
// (docs/benchmarks/bare-ladder.md), and the worker loads no tracing interceptors to read them.
const temporal = new Client({
  connection: temporalConnection,
  namespace: config.TEMPORAL_NAMESPACE,
  dataConverter: temporalSetup.dataConverter,
  interceptors: tracing.exporting ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : {},
});
collectDefaultMetrics({ register });
registerLeadOutboxMetrics(register, sql);
const metrics =
  config.METRICS_PORT === null
    ? null
    : await serveMetrics(register, { host: config.METRICS_HOST, port: config.METRICS_PORT, name: 'api' });
stop.defer('metrics endpoint', () => metrics?.close());
const taskQueue = config.TEMPORAL_TASK_QUEUE;
const leadDispatcher = createLeadDispatcher({ sql, temporal, taskQueue });
leadDispatcher.startSweeping();
stop.defer('lead dispatcher', () => leadDispatcher.stop());
const startsAfterAnswer = createStartQueue({
  onError: (key, error) => log.error({ err: error, workflowId: key }, 'workflow not started, left to the sweep'),
});
stop.defer('workflow starts after answers', () => startsAfterAnswer.stop());
const exports = {
  dir: path.resolve(config.EXPORT_DIR),
  inlineMaxRows: config.EXPORT_INLINE_MAX_ROWS,
  retentionSeconds: config.EXPORT_RETENTION_HOURS * 3600,
  pageRows: EXPORT_PAGE_ROWS,
  taskQueue: config.EXPORT_TASK_QUEUE,
};
const services: AppServices = {
  db,
  sql,
  temporal,
  temporalConnection,
  taskQueue,
  leadDispatcher,
  startsAfterAnswer,
  defaultRateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
  webhookRateLimits: {
    perAddress: config.WEBHOOK_RATE_LIMIT_PER_IP,
    perConnection: config.WEBHOOK_RATE_LIMIT_PER_CONNECTION,
  },
  exports,
  voicePreviews: voicePreviewsFromConfig(config),
  backgroundAudio: backgroundAudioFromConfig(config),
  translator: translatorFromConfig(config),
  chat: chatProviderFromConfig(config),
  speech: {
    taskQueue: config.SPEECH_TASK_QUEUE,
    sox: { soxPath: config.SOX_PATH, timeoutMs: SPEECH_DECODE_TIMEOUT_MS },
  },
  whatsapp: {
    provider: createWhatsAppProvider(config, db),
    appSecret: config.WHATSAPP_APP_SECRET,
    verifyToken: config.WHATSAPP_VERIFY_TOKEN,
  },
  simulators: config.SIMULATORS,
  telephonyProvider: config.FALLBACK_CARRIER,
  conversationEngine: config.CONVERSATION_ENGINE,
  dialogue: config,
  relaySilenceMs: config.RELAY_SILENCE_TIMEOUT_MS,
  carrierKeyring: config.SECRETS_KEYS,
  egress: createEgress(egressSettings(config)),
  calendarEndpoints: calendarEndpointsOf(config),
  ...(config.TEMPORAL_CODEC_TOKEN &&
    config.SECRETS_KEYS && {
      codecServer: {
        codec: new EncryptionCodec(config.SECRETS_KEYS),
        token: config.TEMPORAL_CODEC_TOKEN,
        corsOrigin: config.TEMPORAL_CODEC_CORS_ORIGIN ?? new URL(config.TEMPORAL_UI_URL).origin,
        corsCredentials: config.TEMPORAL_CODEC_CORS_CREDENTIALS,
      },
    }),
  publicBaseUrl: config.PUBLIC_BASE_URL,
  telephonySigningSecrets: {
    // Disabled simulators post no events: any that claims to come from one is refused.
    ...(config.SIMULATED_CARRIER_SIGNING_SECRET &&
      config.SIMULATORS !== 'disabled' && { simulated: config.SIMULATED_CARRIER_SIGNING_SECRET }),
  },
};
const app = createApp(services, { trustProxy: config.TRUST_PROXY });
// Every API process walks on from the Telnyx questions nobody answered in time; they share the waits by claiming them.
const questionWaits = createQuestionWaitSweep(services);
questionWaits.start();
stop.defer('telnyx question waits', () => questionWaits.stop());

// Every API process trims old API logs now and then; the DELETE is idempotent, so several may.
const API_LOG_TRIM_INTERVAL_MS = 60 * 60_000;
const trimLogs = () =>
  trimApiLogs({ sql }, config.API_LOG_RETENTION_DAYS).catch((error) =>
    log.error({ err: error }, 'trimming API logs failed'),
  );
void trimLogs();
const trimTimer = setInterval(() => void trimLogs(), API_LOG_TRIM_INTERVAL_MS).unref();
stop.defer('api log trim', () => clearInterval(trimTimer));

const server = app.listen(config.PORT, config.HOST, () => {
  log.info({ url: `http://${config.HOST}:${config.PORT}`, dialogue: config.DIALOGUE_PROVIDER }, 'API listening');
});
// Takes no new connection; the requests in flight get half the grace period to be answered, then are cut.
stop.defer('http server', () => stopHttpServer(server, config.SHUTDOWN_GRACE_MS / 2));
// Calls' ConversationRelay sockets (docs/features/conversation/relay.md); cut first when stopping: a cut one is a dropped
// conversation, its call hung up.
const upgrades = routeUpgrades(server);
// Web test sessions (docs/features/test-sessions.md): ended as api_stopping, recorded and billed, before the database
// closes.
const testSessions = attachTestSessionSockets(upgrades.route(isTestSessionSocket), services);
stop.defer('test session sockets', () => testSessions.close());
const relay = attachConversationRelay(upgrades.rest, services);
stop.defer('conversation relay sockets', () => relay.close());
