import { z } from 'zod';
import { DEFAULT_STATUS_CALLBACK_EVENTS, SUBSCRIBABLE_PROGRESS_STATES } from './calls/call-states';
import { ConfigError } from './config-error';
import { CONVERSATION_ENGINES } from './conversation/conversation-engine';
import { LOG_LEVELS } from './log';
import { withRenamedSettings, type SettingRenames } from './renamed-settings';
import { keyringSchema } from './secrets/keyring';
import { isAddressOrRange, type EgressSettings } from './http/egress';
import { CPU_BUDGET_DEFAULTS } from './cpu-budget/cpu-budget';
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from './sql-pool';
import { AMBIGUOUS_RESEND_RULES } from './whatsapp/ambiguous-resend';
import { SIMULATOR_SETTINGS } from './simulators';

// z.coerce.boolean() turns the string "false" into true, so booleans are parsed by name.
/**
 * A metrics endpoint's port: a number (0: any free port), or `off` for none
 * (docs/operations.md#processes-and-ports).
 */
const metricsPort = (port: number) =>
  z
    .union([z.literal('off'), z.coerce.number().int().min(0).max(65535)])
    .default(port)
    .transform((value) => (value === 'off' ? null : value));

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/**
 * The task queue of the export workers when EXPORT_TASK_QUEUE is not set: the main queue's name with
 * `-exports`, so that setting TEMPORAL_TASK_QUEUE alone keeps the API and both workers agreeing.
 */
export const defaultExportTaskQueue = (taskQueue: string) => `${taskQueue}-exports`;

/** The task queue of the speech workers when SPEECH_TASK_QUEUE is not set: the main queue's name with `-speech`. */
export const defaultSpeechTaskQueue = (taskQueue: string) => `${taskQueue}-speech`;

/** WORKFLOW_STACK_TRACES unset, and a worker created without saying (worker/create-worker.ts). */
export const DEFAULT_WORKFLOW_STACK_TRACES: 'on' | 'off' = 'off';

/** The variables one by one, before the values that depend on others are resolved. */
/** The Meta twin's accounts (META_TWIN_ACCOUNTS). */
const metaTwinAccountsSchema = z.array(
  z.object({
    accessToken: z.string().min(8),
    businessAccountId: z.string().regex(/^\d{5,32}$/),
    phoneNumbers: z.array(z.object({ id: z.string().regex(/^\d{5,32}$/), displayPhoneNumber: z.string().min(1) })),
  }),
);

export const configVariables = z.object({
  DATABASE_URL: z.string().url().startsWith('postgres'),
  /**
   * PostgreSQL's deadlines on every pool's connections (lib/sql-pool.ts DatabaseTimeouts; 0 turns one off): a statement
   * running longer is cancelled; a session idle inside a transaction longer is ended, and its locks released.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(DEFAULT_DATABASE_TIMEOUTS.statementTimeoutMs),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(DEFAULT_DATABASE_TIMEOUTS.idleInTransactionTimeoutMs),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('workspace'),
  /** The export workers' task queue (worker/export-worker.ts); unset: defaultExportTaskQueue(TEMPORAL_TASK_QUEUE). */
  EXPORT_TASK_QUEUE: z.string().min(1).optional(),
  /** Where recording analyses send their activities (the speech workers); unset: defaultSpeechTaskQueue(TEMPORAL_TASK_QUEUE). */
  SPEECH_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * Recordings one worker process analyses at once: each runs a recogniser of about 110 MB and one CPU
   * (docs/features/speech.md); more wait in the task queue.
   */
  SPEECH_ANALYSIS_SLOTS: z.coerce.number().int().min(1).max(64).default(2),
  /** The embedded recogniser's CLI (Debian's pocketsphinx): a name on PATH or a path. */
  POCKETSPHINX_PATH: z.string().min(1).default('pocketsphinx_continuous'),
  TEMPORAL_UI_URL: z.string().url().default('http://127.0.0.1:8233'),
  // ---- Reaching a secured Temporal, and the payload codec's server (docs/cluster.md#a-secured-temporal,
  // docs/temporal-ui.md#encrypted-payloads). Every Client and Worker is built from these (lib/temporal/connection.ts).
  /**
   * Whether payloads are sealed with SECRETS_KEYS (docs/temporal-ui.md#encrypted-payloads). false: written in plain
   * text, sealed ones still decoded: the first step of turning the codec on across processes of mixed versions.
   */
  TEMPORAL_PAYLOAD_ENCRYPTION: booleanFlag.default(true),
  /** TLS to Temporal with the system's CAs; implied by any other TEMPORAL_TLS_* setting or TEMPORAL_API_KEY. */
  TEMPORAL_TLS: booleanFlag.default(false),
  /** The CA that signed the server's certificate, PEM text or a file (one of the two); unset: the system's CAs. */
  TEMPORAL_TLS_SERVER_CA: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_CA_FILE: z.string().min(1).optional(),
  /** The name the server's certificate is checked against (SNI), when it is not TEMPORAL_ADDRESS's host. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** mTLS: this client's certificate and private key, PEM text or files, both or neither. The key is never logged. */
  TEMPORAL_TLS_CLIENT_CERT: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_KEY_FILE: z.string().min(1).optional(),
  /** Temporal Cloud's API key (sent as a bearer token, over TLS). Never logged. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /**
   * The operator token of the codec server (POST /codec/decode, /codec/encode on the API): at least 32 characters.
   * Unset: the API serves no codec routes.  Never logged.
   */
  TEMPORAL_CODEC_TOKEN: z.string().min(32).max(512).optional(),
  /** The browser origin allowed to call the codec routes (the Web UI's); unset: TEMPORAL_UI_URL's origin. */
  TEMPORAL_CODEC_CORS_ORIGIN: z.string().url().optional(),
  /** Whether browsers may send cookies to the codec routes (the UI's "include cross-origin credentials"). */
  TEMPORAL_CODEC_CORS_CREDENTIALS: booleanFlag.default(false),
  /** Ahead-of-time workflow bundle (npm run build:workflows); unset: the worker bundles at start. */
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  /**
   * Whether the simulated carrier and the simulated WhatsApp provider stand in for a number or sender bound to no
   * connection (docs/configuration.md#simulators): `disabled` (the default, production) refuses such a number or sender
   * at the request that would use it, and the worker never dials or sends through a simulator; `enabled` (`npm start`'s
   * development stack) lets them stand in, their calls and messages free and marked `simulated`; `billed` (the tests)
   * lets them stand in, charged as a real provider's are.
   */
  SIMULATORS: z.enum(SIMULATOR_SETTINGS).default('disabled'),
  /**
   * The carrier a call goes through when its caller number is bound to no carrier connection of its workspace
   * (lib/providers.ts createCarrier), when SIMULATORS is enabled: simulated, the simulated carrier's REST API. Formerly
   * TELEPHONY_PROVIDER.
   */
  FALLBACK_CARRIER: z.enum(['simulated']).default('simulated'),
  /**
   * How an answered Twilio or Telnyx call's agent talks (lib/conversation/conversation-engine.ts): relay (the default),
   * a ConversationRelay socket to the API run by the dialogue engine; gather, the script walk's speech Gathers for
   * every agent (a fallback: an agent may also ask for it alone).
   */
  CONVERSATION_ENGINE: z.enum(CONVERSATION_ENGINES).default('relay'),
  /**
   * How long a ConversationRelay conversation waits for the lead after the agent's words would have been said, before
   * the agent asks again (docs/features/conversation/relay.md#silence); unset: the script walk's answer timeout, 6 s.
   */
  RELAY_SILENCE_TIMEOUT_MS: z.coerce.number().int().min(200).max(60_000).optional(),
  /**
   * The WhatsApp provider a sender goes through when it is bound to no Meta connection (lib/providers.ts
   * createWhatsAppProvider), when SIMULATORS is enabled: simulated, the simulated provider's Graph-API-shaped HTTP API.
   * Formerly WHATSAPP_PROVIDER.
   */
  FALLBACK_WHATSAPP_PROVIDER: z.enum(['simulated']).default('simulated'),
  /** The simulated WhatsApp provider's Graph-API-shaped HTTP API (npm run simulated-whatsapp), which senders go through. */
  SIMULATED_WHATSAPP_URL: z.string().url().default('http://127.0.0.1:3200'),
  /** Port and interface the simulated WhatsApp provider process listens on. */
  SIMULATED_WHATSAPP_PORT: z.coerce.number().int().min(0).max(65535).default(3200),
  SIMULATED_WHATSAPP_HOST: z.string().default('127.0.0.1'),
  /** Simulated WhatsApp time: 1 is real time, 0.001 makes a 2 s template review take 2 ms (the 24-hour window is not scaled). */
  SIMULATED_WHATSAPP_TIME_SCALE: z.coerce.number().positive().max(100).default(1),
  /**
   * The simulated provider as Meta's twin (docs/features/whatsapp/meta-cloud-api.md#the-meta-twin): a JSON array of
   * `{ accessToken, businessAccountId, phoneNumbers: [{ id, displayPhoneNumber }] }`. Unset: the embedded simulated
   * provider. Holds tokens: never logged.
   */
  META_TWIN_ACCOUNTS: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined) return undefined;
      const parsed = metaTwinAccountsSchema.safeParse(
        (() => {
          try {
            return JSON.parse(value) as unknown;
          } catch {
            return null;
          }
        })(),
      );
      if (parsed.success) return parsed.data;
      context.addIssue({
        code: 'custom',
        message:
          'must be a JSON array of { accessToken, businessAccountId, phoneNumbers: [{ id, displayPhoneNumber }] }',
      });
      return z.NEVER;
    }),
  /** Where the simulated provider posts its webhooks (the app's webhook subscription, as set in Meta's app dashboard). */
  SIMULATED_WHATSAPP_WEBHOOK_URL: z.string().url().default('http://127.0.0.1:3000/whatsapp/webhook'),
  /**
   * The app secret WhatsApp webhooks are signed with (X-Hub-Signature-256) and the API checks them
   * against (POST /whatsapp/webhook). Unset: the API refuses every webhook. Never logged.
   */
  WHATSAPP_APP_SECRET: z.string().min(16).optional(),
  /** The token the provider's subscription check (GET /whatsapp/webhook, hub.verify_token) must present. Unset: every check refused. */
  WHATSAPP_VERIFY_TOKEN: z.string().min(8).optional(),
  /**
   * A send whose answer was lost (ambiguous) is resolved after this many seconds: sent if its status came, else marked
   * unknown, or resent once under WHATSAPP_AMBIGUOUS_RESEND=after-later-status (docs/features/whatsapp/sending.md#no-message-twice).
   */
  WHATSAPP_RESEND_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(900),
  /**
   * Whether an ambiguous send whose status never came is ever resent (lib/whatsapp/ambiguous-resend.ts): `never` (the
   * default: marked unknown) or `after-later-status` (the older rule, which may send a message twice).
   */
  WHATSAPP_AMBIGUOUS_RESEND: z.enum(AMBIGUOUS_RESEND_RULES).default('never'),
  /** The simulated carrier's REST API (npm run simulated-carrier), which the worker dials through. */
  SIMULATED_CARRIER_URL: z.string().url().default('http://127.0.0.1:3100'),
  /** Port and interface the simulated carrier process listens on. */
  SIMULATED_CARRIER_PORT: z.coerce.number().int().min(0).max(65535).default(3100),
  SIMULATED_CARRIER_HOST: z.string().default('127.0.0.1'),
  /**
   * The secret the simulated carrier signs its status events with and the API checks them against
   * (POST /telephony/simulated/events). Unset: the API refuses every simulated event. Never logged.
   */
  SIMULATED_CARRIER_SIGNING_SECRET: z.preprocess(
    // Empty is unset: docker-compose.yml passes it through as '' when the dev profile's simulators are not run.
    (value) => (value === '' ? undefined : value),
    z.string().min(16).optional(),
  ),
  /**
   * The key ring secrets at rest are sealed with (carrier connections' tokens): `id:base64key,...`, 32-byte
   * keys, the first the current one (docs/features/carriers/connections.md#the-key-ring). Unset: what reads or writes a
   * carrier connection's secret refuses to, naming this variable; `npm start` sets a key of its own
   * (.data/secrets-keys). Never logged.
   */
  SECRETS_KEYS: keyringSchema.optional(),
  /**
   * The simulated carrier's time: 1 is real time, 0.001 makes a 40 s call last 40 ms (tests, benches); `npm start`
   * runs the carrier twins at the same pace. Formerly SIMULATED_TELEPHONY_TIME_SCALE.
   */
  SIMULATED_CARRIER_TIME_SCALE: z.coerce.number().positive().max(100).default(1),
  /** Where carriers POST status events: the API's address as the carrier reaches it (+ /telephony/{provider}/events). */
  TELEPHONY_CALLBACK_BASE_URL: z.string().url().default('http://127.0.0.1:3000'),
  /**
   * The API's public address as stores, carriers and other senders of webhooks reach it (behind a proxy: the
   * proxy's address, with any path prefix it strips). The CLI's `crm connect` prints the connection's receiver as
   * <this>/crm/connections/{id}/webhooks; a Twilio call's callback and TwiML URLs are <this>/telephony/twilio/...,
   * and their X-Twilio-Signature is checked against <this> + the path and query as received
   * (docs/features/carriers/twilio.md#twilio-callbacks). The worker and the API must be given the same value.
   */
  PUBLIC_BASE_URL: z.string().url().default('http://127.0.0.1:3000'),
  /**
   * How long a lead waits for its call's terminal event before reconciling with the carrier's lookup.
   * Unset: ring timeout + the longest call + a margin (lib/calls/call-deadline.ts).
   */
  CALL_END_DEADLINE_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  /**
   * The progress events a dial subscribes to, comma-separated, from ringing and in-progress (the end is
   * always sent); empty subscribes to none. Default: in-progress (lib/calls/call-states.ts).
   */
  TELEPHONY_STATUS_CALLBACK_EVENTS: z
    .string()
    .default(DEFAULT_STATUS_CALLBACK_EVENTS.join(','))
    .transform((list) =>
      list
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(SUBSCRIBABLE_PROGRESS_STATES)).transform((states) => [...new Set(states)])),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(120),
  /**
   * Journey and result webhooks may go to plain http:// URLs (development, tests, twins); off: https only
   * (docs/egress.md). Off in production.
   */
  EGRESS_ALLOW_HTTP: booleanFlag.default(false),
  /**
   * Addresses or CIDR ranges, comma-separated, that journey and result webhooks may reach although loopback,
   * private or otherwise special (docs/egress.md): the test stack's receivers on 127.0.0.0/8. Empty in production.
   */
  EGRESS_ALLOW_ADDRESSES: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    )
    // Refined as a whole, so that an error names the variable rather than one of its entries.
    .refine((list) => list.every(isAddressOrRange), 'an IP address or a CIDR range such as 127.0.0.0/8'),
  /** Requests a minute one address may send to the signed public webhooks (api/door/webhook-door.ts). */
  WEBHOOK_RATE_LIMIT_PER_IP: z.coerce.number().int().positive().max(100_000).default(1200),
  /** Requests a minute to one connection's signed public webhooks, from every address together. */
  WEBHOOK_RATE_LIMIT_PER_CONNECTION: z.coerce.number().int().positive().max(100_000).default(6000),
  TRUST_PROXY: booleanFlag.default(false),
  /** Where export jobs write their files: a volume the API and the workers share. */
  EXPORT_DIR: z.string().min(1).default('.data/exports'),
  /** Exports of at most this many rows are answered inline; larger ones become jobs (202). */
  EXPORT_INLINE_MAX_ROWS: z.coerce.number().int().min(0).max(1_000_000).default(5000),
  /** A finished export file can be downloaded this long, then it is deleted. */
  EXPORT_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  /**
   * Live sheets on Google (docs/features/sheets.md#quota): write requests per minute per service account, shared by
   * every export worker through PostgreSQL. Google allows 60 per minute per user per project; 54 leaves room.
   */
  SHEETS_GOOGLE_WRITES_PER_MINUTE: z.coerce.number().int().min(1).max(6_000).default(54),
  /** Writes a service account may make at once after a pause: at most burst + the per-minute pace in any minute. */
  SHEETS_GOOGLE_WRITE_BURST: z.coerce.number().int().min(1).max(600).default(5),
  /** API logs of a campaign are kept this long. */
  API_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * Workflow executions a worker keeps in memory between their tasks. Beyond it the least recently used
   * are evicted and replayed from history when they wake. Unset, it follows the heap limit
   * (worker/workflow-cache-size.ts): the SDK's default sizes the cache from the machine's memory, not
   * from the heap, and 10,000 journey runs waiting on timers ran the workflow thread out of heap.
   */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).max(100_000).optional(),
  /**
   * Worker: how long one CPU step over tenant text (the rules' call intelligence, a fetched transcript's redaction) may
   * run in its thread before the thread is terminated and the step fails for good (lib/cpu-budget, docs/cpu-budget.md).
   */
  WORKER_CPU_BUDGET_MS: z.coerce.number().int().min(50).max(60_000).default(CPU_BUDGET_DEFAULTS.budgetMs),
  /** Worker: the threads those steps run in at most (lib/cpu-budget, docs/cpu-budget.md). */
  WORKER_CPU_THREADS: z.coerce.number().int().min(1).max(16).default(CPU_BUDGET_DEFAULTS.threads),
  /**
   * `on`: the SDK captures a stack for every promise a workflow creates, for the Web UI's Stack Trace tab (the
   * `__stack_trace` query). `off` (default): it captures none, a third less CPU on the workflow thread
   * (bench/stack-traces.ts), and that tab answers that stack traces are not enabled. Turn it on, and restart the
   * workers, to look at where runs wait: a run's stack is rebuilt when its history is replayed
   * (docs/temporal-ui.md#the-stack-trace-tab, worker/workflow-stack-traces.ts).
   */
  WORKFLOW_STACK_TRACES: z.enum(['on', 'off']).default(DEFAULT_WORKFLOW_STACK_TRACES),
  /**
   * How long a process takes, at most, from SIGTERM or SIGINT until it has exited (lib/shutdown.ts,
   * docs/operations-stopping.md): what has not finished stopping by then is named in a log line and the
   * process exits 70. A container platform must wait longer before its SIGKILL (Docker: 10 s by default).
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(100).max(3_600_000).default(8_000),
  /** JSON lines on stdout (lib/log.ts); silent writes none (the tests' processes write warn and above). */
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** The interface every metrics endpoint listens on (Prometheus scrapes GET /metrics). */
  METRICS_HOST: z.string().default('127.0.0.1'),
  /** The API's Prometheus endpoint: requests by route and status, latency, rate-limit refusals, the lead outbox. */
  METRICS_PORT: metricsPort(9464),
  /** The worker's own Prometheus endpoint: calls placed by outcome, holds open, deliveries retrying. */
  WORKER_METRICS_PORT: metricsPort(9465),
  /** The worker's Temporal SDK runtime metrics (the SDK's Prometheus exporter: slots, schedule-to-start, polls). */
  WORKER_SDK_METRICS_PORT: metricsPort(9466),
  /** The export worker's Temporal SDK runtime metrics. */
  EXPORT_WORKER_SDK_METRICS_PORT: metricsPort(9467),
  /**
   * Traces go over OTLP/HTTP (JSON) to <this>/v1/traces, e.g. http://127.0.0.1:4318 (an OpenTelemetry
   * Collector). Unset: no spans are exported.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** The service.name of exported spans; unset: workspace-api, workspace-worker... per process. */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** The speech synthesiser of voice previews, and the MP3 encoder it pipes into: a name on PATH or a path. */
  ESPEAK_NG_PATH: z.string().min(1).default('espeak-ng'),
  LAME_PATH: z.string().min(1).default('lame'),
  /** A preview that takes longer is abandoned (502 provider_error, upstreamStatus 504). */
  SPEECH_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Voice previews cached by content (voice, text, synthesiser version): kept across restarts. */
  PREVIEW_CACHE_DIR: z.string().min(1).default('.data/voice-previews'),
  /** The most preview files the cache keeps: past it, the least recently made are deleted. */
  PREVIEW_CACHE_MAX_FILES: z.coerce.number().int().min(1).max(100_000).default(500),
  /**
   * Who synthesises voice previews (docs/features/voices.md#who-synthesises-previews): espeak-ng, the embedded offline
   * synthesiser (development's default); amazon-polly, Amazon Polly through the AWS SDK, the voices calls speak with;
   * polly-twin, the same through the Polly twin, named so in each preview's answer so that its audio never passes for
   * Polly's. Never a fallback of one to another: a failing Polly is a 502.
   */
  VOICE_PREVIEW_SYNTHESIZER: z.enum(['espeak-ng', 'amazon-polly', 'polly-twin']).default('espeak-ng'),
  /** amazon-polly, polly-twin: the AWS region of Polly (and of the credentials' signature). */
  POLLY_REGION: z.string().min(1).default('us-east-1'),
  /** amazon-polly: unset, AWS's regional endpoint; polly-twin: the twin's base URL (required), e.g. http://127.0.0.1:3800. */
  POLLY_ENDPOINT: z.string().url().optional(),
  /**
   * amazon-polly, polly-twin: the deployment's access key (both or neither). Unset for amazon-polly: the AWS SDK's
   * default credentials (the machine's or task's role, AWS_* variables, ~/.aws). The secret is never logged.
   */
  POLLY_ACCESS_KEY_ID: z.string().min(1).optional(),
  POLLY_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /**
   * The calendar twins' base URLs (docs/features/calendar.md#the-twins): a google-calendar-twin or calcom-twin calendar
   * connection sends its requests there, recorded under the twin's name; unset: such a connection is refused. Real
   * connections go to Google's and Cal.com's own hosts, never to a URL anyone types.
   */
  GOOGLE_CALENDAR_TWIN_URL: z.string().url().optional(),
  CALCOM_TWIN_URL: z.string().url().optional(),
  /** The platform's background audio files (made at install time, or on first use) live here. */
  BACKGROUND_AUDIO_DIR: z.string().min(1).default('.data/background-audio'),
  /** sox, which makes the platform's background audio and decodes and measures uploads: a name on PATH or a path. */
  SOX_PATH: z.string().min(1).default('sox'),
  /** One sox run (decoding an upload, making a platform file) that takes longer is killed. */
  AUDIO_DECODE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /**
   * The embedded translator of transcripts (Debian's apertium): a name on PATH or a path. Not APERTIUM_PATH:
   * the apertium script itself reads that variable (a folder it puts in front of PATH).
   */
  APERTIUM_BIN: z.string().min(1).default('apertium'),
  /** Translating one transcript (every apertium run it takes) that takes longer is abandoned (502 provider_error, upstreamStatus 504). */
  TRANSLATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(30_000),
  /**
   * Who answers POST /campaigns/{id}/chat/stream (docs/features/chat.md): the embedded builtin-analyst (the
   * campaign's own figures, no model), or a chat model behind any OpenAI-compatible chat completions endpoint.
   */
  CHAT_PROVIDER: z.enum(['builtin-analyst', 'openai-compatible']).default('builtin-analyst'),
  /** openai-compatible: the API's base URL, e.g. https://api.openai.com/v1 (POST <this>/chat/completions). */
  CHAT_BASE_URL: z.string().url().optional(),
  /** openai-compatible: the model name sent with every request. */
  CHAT_MODEL: z.string().min(1).optional(),
  /** openai-compatible: the bearer key, if the endpoint needs one. Never logged. */
  CHAT_API_KEY: z.string().min(1).optional(),
  /** openai-compatible: an answer that takes longer is abandoned (a final error event). */
  CHAT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(120_000),
  /**
   * Who decides a relay conversation's words (docs/features/conversation/model-engine.md): script, the agent's script walk; or
   * openai-compatible, a chat model behind any OpenAI-compatible chat completions endpoint, for agents that have
   * instructions (the others keep the script); openai-twin, the same through the OpenAI twin, named so in the logs so
   * that its words never pass for a model's (`npm start`'s default: docs/features/conversation/model-engine.md#in-the-development-stack).
   */
  DIALOGUE_PROVIDER: z.enum(['script', 'openai-compatible', 'openai-twin']).default('script'),
  /** openai-compatible, openai-twin: the API's base URL, e.g. https://api.openai.com/v1 (POST <this>/chat/completions). */
  DIALOGUE_BASE_URL: z.string().url().optional(),
  /** openai-compatible, openai-twin: the model name sent with every request. */
  DIALOGUE_MODEL: z.string().min(1).optional(),
  /** openai-compatible, openai-twin: the bearer key, if the endpoint needs one. Never logged. */
  DIALOGUE_API_KEY: z.string().min(1).optional(),
  /**
   * openai-compatible, openai-twin: a model request that sends nothing for this long (no answer, or no chunk since the
   * last) is abandoned; the agent apologises and the conversation ends.
   */
  DIALOGUE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /**
   * Who fills an answered call's extraction fields and evaluates it (docs/features/call-intelligence.md): rule-based,
   * the embedded rules (no model); openai-compatible, a chat model behind any OpenAI-compatible chat completions
   * endpoint (structured outputs), falling back to the rules for a call it fails; openai-twin, the same through the
   * OpenAI twin, recorded under the twin's name so that its results never pass for a model's (`npm start`'s default:
   * docs/features/conversation/model-engine.md#in-the-development-stack).
   */
  INTELLIGENCE_PROVIDER: z.enum(['rule-based', 'openai-compatible', 'openai-twin']).default('rule-based'),
  /** openai-compatible, openai-twin: the API's base URL, e.g. https://api.openai.com/v1 (POST <this>/chat/completions). */
  INTELLIGENCE_BASE_URL: z.string().url().optional(),
  /** openai-compatible, openai-twin: the model name sent with every request. */
  INTELLIGENCE_MODEL: z.string().min(1).optional(),
  /** openai-compatible, openai-twin: the bearer key, if the endpoint needs one. Never logged. */
  INTELLIGENCE_API_KEY: z.string().min(1).optional(),
  /**
   * openai-compatible, openai-twin: a request that has not answered in full within this is abandoned and the call gets
   * the rules' result. Below the activity's own 2 minutes (workflows/call-intelligence/call-intelligence.ts).
   */
  INTELLIGENCE_TIMEOUT_MS: z.coerce.number().int().min(100).max(100_000).default(30_000),
  /**
   * The model bounds (docs/configuration.md#model-bounds): what one request to any model (the dialogue, the campaign
   * chat, call intelligence) may cost, whatever a tenant's lead, document or conversation holds. `max_tokens` of each
   * completion by its use; the history window (the latest messages, at most so many and so many characters); tool
   * rounds of one dialogue reply before the model is asked for words only.
   */
  MODEL_MAX_TOKENS_DIALOGUE: z.coerce.number().int().min(16).max(4_096).default(300),
  MODEL_MAX_TOKENS_CHAT: z.coerce.number().int().min(16).max(8_192).default(1_000),
  MODEL_MAX_TOKENS_INTELLIGENCE: z.coerce.number().int().min(256).max(16_384).default(2_000),
  MODEL_HISTORY_MESSAGES: z.coerce.number().int().min(2).max(500).default(40),
  MODEL_HISTORY_CHARS: z.coerce.number().int().min(1_000).max(500_000).default(24_000),
  MODEL_MAX_TOOL_ROUNDS: z.coerce.number().int().min(0).max(10).default(3),
});

/** Variables another one requires (`when` says when): each missing one is named. */
const REQUIRED_WHEN = [
  {
    when: (variables: z.infer<typeof configVariables>) => variables.CHAT_PROVIDER === 'openai-compatible',
    names: ['CHAT_BASE_URL', 'CHAT_MODEL'],
    message: 'is required when CHAT_PROVIDER is openai-compatible',
  },
  {
    when: (variables: z.infer<typeof configVariables>) => variables.DIALOGUE_PROVIDER !== 'script',
    names: ['DIALOGUE_BASE_URL', 'DIALOGUE_MODEL'],
    message: 'is required when DIALOGUE_PROVIDER is openai-compatible or openai-twin',
  },
  {
    when: (variables: z.infer<typeof configVariables>) => variables.INTELLIGENCE_PROVIDER !== 'rule-based',
    names: ['INTELLIGENCE_BASE_URL', 'INTELLIGENCE_MODEL'],
    message: 'is required when INTELLIGENCE_PROVIDER is openai-compatible or openai-twin',
  },
  {
    when: (variables: z.infer<typeof configVariables>) => variables.VOICE_PREVIEW_SYNTHESIZER === 'polly-twin',
    names: ['POLLY_ENDPOINT', 'POLLY_ACCESS_KEY_ID', 'POLLY_SECRET_ACCESS_KEY'],
    message: 'is required when VOICE_PREVIEW_SYNTHESIZER is polly-twin',
  },
  {
    when: (variables: z.infer<typeof configVariables>) =>
      (variables.POLLY_ACCESS_KEY_ID === undefined) !== (variables.POLLY_SECRET_ACCESS_KEY === undefined),
    names: ['POLLY_ACCESS_KEY_ID', 'POLLY_SECRET_ACCESS_KEY'],
    message: 'is required with the other: a Polly access key is both or neither',
  },
  {
    when: (variables: z.infer<typeof configVariables>) => variables.TEMPORAL_CODEC_TOKEN !== undefined,
    names: ['SECRETS_KEYS'],
    message: 'is required when TEMPORAL_CODEC_TOKEN is set (the codec server decodes with its keys)',
  },
] as const;

/** Settings renamed to say what they select: { new name: old name }, the old one read for one deprecation period. */
export const CONFIG_RENAMES: SettingRenames = {
  FALLBACK_CARRIER: 'TELEPHONY_PROVIDER',
  FALLBACK_WHATSAPP_PROVIDER: 'WHATSAPP_PROVIDER',
  SIMULATED_CARRIER_TIME_SCALE: 'SIMULATED_TELEPHONY_TIME_SCALE',
};

/**
 * The configuration, parsed once. Renamed settings are read under their old names too (CONFIG_RENAMES). Queues are
 * resolved here, once, so the API that routes export activities and the workers that poll for them see one value.
 */
export const configSchema = withRenamedSettings(
  CONFIG_RENAMES,
  configVariables
    .superRefine((variables, context) => {
      for (const rule of REQUIRED_WHEN) {
        if (!rule.when(variables)) continue;
        for (const name of rule.names)
          if (!variables[name]) context.addIssue({ code: 'custom', path: [name], message: rule.message });
      }
    })
    .transform((variables) => ({
      ...variables,
      EXPORT_TASK_QUEUE: variables.EXPORT_TASK_QUEUE ?? defaultExportTaskQueue(variables.TEMPORAL_TASK_QUEUE),
      SPEECH_TASK_QUEUE: variables.SPEECH_TASK_QUEUE ?? defaultSpeechTaskQueue(variables.TEMPORAL_TASK_QUEUE),
    })),
);

export type Config = Readonly<z.infer<typeof configSchema>>;

function parseWith<Schema extends z.ZodType<object>>(
  schema: Schema,
  env: NodeJS.ProcessEnv,
): Readonly<z.infer<Schema>> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = issue.path.join('.') || 'environment';
    // A renamed setting given under its old name is named as the new one: its value is the old name's.
    const value = env[variable] ?? env[CONFIG_RENAMES[variable] ?? ''];
    const detail = value === undefined ? 'is required but not set' : `is invalid: ${issue.message}`;
    throw new ConfigError(`config: ${variable} ${detail}`);
  }
  return Object.freeze(result.data);
}

/** Parses the environment once. The first bad variable is named in a one-line message. */
/** The database deadlines of the configuration, as every pool takes them (createSqlPool, createDatabase). */
export const databaseTimeoutsOf = (
  config: Pick<Config, 'DATABASE_STATEMENT_TIMEOUT_MS' | 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS'>,
): DatabaseTimeouts => ({
  statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
});

export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseWith(configSchema, env);
}

/** For process entry points: a bad environment stops the process with one line naming the variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  return orExit(() => parseConfig(env));
}

/** The fallback WhatsApp provider alone (under its old name too), for the operator CLI's sender connect. */
export function parseFallbackWhatsAppProvider(env: NodeJS.ProcessEnv = process.env) {
  const schema = configVariables.pick({ FALLBACK_WHATSAPP_PROVIDER: true });
  return parseWith(withRenamedSettings(CONFIG_RENAMES, schema), env).FALLBACK_WHATSAPP_PROVIDER;
}

/** The stop settings alone, for a process that needs nothing else of the configuration (simulators/shopify-twin/main.ts). */
export const stopConfigSchema = configVariables.pick({ SHUTDOWN_GRACE_MS: true });

/** loadConfigOrExit for the stop settings alone. */
export function loadStopConfigOrExit(env: NodeJS.ProcessEnv = process.env): Readonly<z.infer<typeof stopConfigSchema>> {
  return orExit(() => parseWith(stopConfigSchema, env));
}

/**
 * SECRETS_KEYS alone, for a process that reads or writes sealed secrets and needs nothing else of the
 * configuration (the operator CLI). Unset: undefined (lib/carrier-connections/connections.ts requireKeyring refuses).
 */
export function parseSecretsKeys(env: NodeJS.ProcessEnv = process.env) {
  return parseWith(configVariables.pick({ SECRETS_KEYS: true }), env).SECRETS_KEYS;
}

/** The egress guard's allowances alone (lib/http/egress.ts), for tests that build activities outside the worker. */
export function parseEgressSettings(env: NodeJS.ProcessEnv = process.env): EgressSettings {
  return egressSettings(
    parseWith(configVariables.pick({ EGRESS_ALLOW_HTTP: true, EGRESS_ALLOW_ADDRESSES: true }), env),
  );
}

/** The egress guard's allowances from a parsed configuration. */
export function egressSettings(config: Pick<Config, 'EGRESS_ALLOW_HTTP' | 'EGRESS_ALLOW_ADDRESSES'>): EgressSettings {
  return { allowHttp: config.EGRESS_ALLOW_HTTP, allowAddresses: config.EGRESS_ALLOW_ADDRESSES };
}

/** Where the calendar twins listen (lib/calendar/calendar-connection.ts). */
export function calendarEndpointsOf(config: Pick<Config, 'GOOGLE_CALENDAR_TWIN_URL' | 'CALCOM_TWIN_URL'>) {
  return { googleCalendarTwinUrl: config.GOOGLE_CALENDAR_TWIN_URL, calcomTwinUrl: config.CALCOM_TWIN_URL };
}

function orExit<Parsed>(parse: () => Parsed): Parsed {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
}
