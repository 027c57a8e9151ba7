import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** The levels LOG_LEVEL takes (lib/config.ts). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'silent'] as const satisfies LevelWithSilent[];
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Fields that hold a secret wherever they appear in a line's object (two levels deep): pino replaces
 * their value. Defence in depth: nothing logs headers or bodies in the first place.
 */
const SECRET_FIELDS = [
  'authorization',
  'apiKey',
  'key',
  'secret',
  'signingSecret',
  'webhookSecret',
  'appSecret',
  'verifyToken',
  'password',
  'token',
  // Carrier connections (lib/carrier-connections/connections.ts): their secret material by its own names.
  'authToken',
  'apiKeySecret',
  'secrets',
];
const REDACT_PATHS = SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.headers.${field}`]);

/**
 * The secrets' shapes, wherever they appear in a line's text (a message, an error's message or stack): an
 * API key (wsk_), a result webhook secret (whsec_), and a bearer credential of any shape.
 */
const SECRET_PATTERNS = [/wsk_[A-Za-z0-9_-]{8,}/g, /whsec_[A-Za-z0-9+/=_-]{8,}/g, /(Bearer\s+)[^\s"\\]+/gi];
export const REDACTED = '[redacted]';

/** Where lines go: stdout by default; tests swap in a collector (captureLogLines). */
let target: { write(line: string): unknown } = process.stdout;
/** The `service` field of every line: which process wrote it. */
let service = 'workspace';
/** Secret values of this process's configuration (configureLogging): scrubbed from every line by value. */
let knownSecrets: string[] = [];

function scrub(line: string): string {
  let clean = line;
  for (const secret of knownSecrets) clean = clean.split(secret).join(REDACTED);
  for (const pattern of SECRET_PATTERNS)
    clean = clean.replace(pattern, (_match, bearer?: string) =>
      typeof bearer === 'string' ? `${bearer}${REDACTED}` : REDACTED,
    );
  return clean;
}

/** The ids a line can be about; each is on a line when the work it was written in knows it. */
export interface LogContext {
  requestId?: string;
  workspaceId?: string;
  campaignId?: string;
  workflowId?: string;
}

const logContext = new AsyncLocalStorage<LogContext>();

/** Runs `work` with these ids on every line it logs, down every await it makes. */
export function withLogContext<Result>(fields: LogContext, work: () => Result): Result {
  return logContext.run({ ...logContext.getStore(), ...fields }, work);
}

/** Adds ids learnt along the way (the workspace once the key is read) to the current context's lines. */
export function addLogContext(fields: LogContext): void {
  const store = logContext.getStore();
  if (store) Object.assign(store, fields);
}

/**
 * The process's one logger: JSON lines with time, level, service and msg, and the context of the work a
 * line is about (requestId, workspaceId, campaignId, workflowId) from the context it is written in
(withLogContext) or from child loggers. Until a process
 * entry point calls configureLogging it writes warnings and errors only (the tests' level).
 */
export const log: Logger = pino(
  {
    level: 'warn',
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    hooks: { streamWrite: scrub },
    mixin: () => ({ service, ...logContext.getStore() }),
  },
  { write: (line: string) => target.write(line) },
);

export interface LoggingSetup {
  level: LogLevel;
  /** Which process writes: api, worker, export-worker... (the `service` field of every line). */
  service: string;
  /** The configuration's secret values (signing secrets, the chat model key...): never written, whatever line holds them. */
  secrets?: ReadonlyArray<string | undefined>;
}

/** Called once by each process entry point, before it logs. */
export function configureLogging(setup: LoggingSetup): void {
  log.level = setup.level;
  service = setup.service;
  // Longest first, so that a secret containing another is scrubbed whole.
  knownSecrets = setup.secrets
    ? [...new Set(setup.secrets.filter((secret): secret is string => !!secret && secret.length >= 8))].sort(
        (a, b) => b.length - a.length,
      )
    : [];
}

/** The configuration's values that are secrets (lib/config.ts says "Never logged" of each). */
export function secretsOfConfig(config: {
  SIMULATED_CARRIER_SIGNING_SECRET?: string;
  WHATSAPP_APP_SECRET?: string;
  WHATSAPP_VERIFY_TOKEN?: string;
  CHAT_API_KEY?: string;
  DIALOGUE_API_KEY?: string;
  INTELLIGENCE_API_KEY?: string;
  DATABASE_URL?: string;
  SECRETS_KEYS?: { encoded: readonly string[] };
  META_TWIN_ACCOUNTS?: ReadonlyArray<{ accessToken: string }>;
  TEMPORAL_API_KEY?: string;
  TEMPORAL_TLS_CLIENT_KEY?: string;
  TEMPORAL_CODEC_TOKEN?: string;
  POLLY_SECRET_ACCESS_KEY?: string;
}): Array<string | undefined> {
  const databasePassword = config.DATABASE_URL ? safePasswordOf(config.DATABASE_URL) : undefined;
  return [
    config.SIMULATED_CARRIER_SIGNING_SECRET,
    config.WHATSAPP_APP_SECRET,
    config.WHATSAPP_VERIFY_TOKEN,
    config.CHAT_API_KEY,
    config.DIALOGUE_API_KEY,
    config.INTELLIGENCE_API_KEY,
    databasePassword,
    ...(config.SECRETS_KEYS?.encoded ?? []),
    ...(config.META_TWIN_ACCOUNTS ?? []).map((account) => account.accessToken),
    config.TEMPORAL_API_KEY,
    config.TEMPORAL_TLS_CLIENT_KEY,
    config.TEMPORAL_CODEC_TOKEN,
    config.POLLY_SECRET_ACCESS_KEY,
  ];
}

function safePasswordOf(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Tests: every line written from now until the returned stop() lands in `lines` (parsed), at `level`.
 * stop() puts back the previous target and level.
 */
export function captureLogLines(level: LogLevel = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const previous = { target, level: log.level };
  target = {
    write(line: string) {
      raw.push(line);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
  log.level = level;
  return {
    lines,
    raw,
    stop() {
      target = previous.target;
      log.level = previous.level;
    },
  };
}
