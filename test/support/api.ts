import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { createApp } from '../../api/app';
import type { RouteDefinition } from '../../api/http/route';
import { routes } from '../../api/routes';
import { defaultExportTaskQueue } from '../../lib/config';
import { createSqlPool } from '../../lib/sql-pool';
import type { AppServices } from '../../api/app-services';
import { createQuestionWaitSweep } from '../../api/carriers/telnyx-question-waits';
import { attachConversationRelay } from '../../api/carriers/relay-socket';
import { routeUpgrades } from '../../api/http/upgrade-routes';
import {
  attachTestSessionSockets,
  isTestSessionSocket,
  type TestSessionSocketOptions,
} from '../../api/test-sessions/session-socket';
import { createLeadDispatcher } from '../../lib/temporal/lead-dispatch';
import { createStartQueue } from '../../lib/temporal/start-queue';
import { EXPORT_PAGE_ROWS } from '../../api/exports/exports';
import { TEST_CARRIER_SIGNING_SECRET } from './carrier';
import { defaultTestExportDir } from './export-dir';
import { responseProblems } from './response-check';
import { TEST_KEYRING } from './keyring';
import { testEgress } from './egress';

export interface RunningApi {
  baseUrl: string;
  request(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  /** What stopping the API does to its web test sessions first: each ended as api_stopping, recorded and billed. */
  closeTestSessions(): Promise<void>;
  services: AppServices;
}

export interface TestApiDependencies extends Omit<
  AppServices,
  | 'defaultRateLimitPerMinute'
  | 'temporal'
  | 'temporalConnection'
  | 'taskQueue'
  | 'sql'
  | 'leadDispatcher'
  | 'startsAfterAnswer'
  | 'exports'
  | 'simulators'
> {
  /** The database the API's door reads (the same one as db). */
  url: string;
  temporal: { client: AppServices['temporal']; connection: AppServices['temporalConnection']; taskQueue: string };
  defaultRateLimitPerMinute?: number;
  trustProxy?: boolean;
  /**
   * Run the sweep of Telnyx questions nobody answered, as every production API process does
   * (api/carriers/telnyx-question-waits.ts), with its idle poll (the production one unless given); off by default.
   */
  sweepQuestionWaits?: { idlePollMs?: number };
  /** Run the lead dispatcher's sweep, as every production API process does (off by default: tests that share a database must not start each other's leads). */
  sweepLeads?: { staleAfterMs: number };
  /**
   * Export settings; by default the test file's export directory (its workers' too), the production
   * threshold, retention and page size, and the export task queue the configuration would derive from
   * the task queue.
   */
  exports?: Partial<AppServices['exports']>;
  /**
   * SIMULATORS: the tests enable the simulated carrier and WhatsApp provider, charged as real providers are (billed),
   * unless they test another setting (the production default, disabled: test/stack/no-simulators.test.ts).
   */
  simulators?: AppServices['simulators'];
  /** Web test sessions' timeouts and sweep (api/test-sessions/session-socket.ts); the production ones by default. */
  testSessions?: TestSessionSocketOptions;
}

/** The real Express app on a free loopback port. */
export async function startTestApi(dependencies: TestApiDependencies): Promise<RunningApi> {
  const sql = createSqlPool(dependencies.url);
  afterAll(() => sql.end());
  const temporal = {
    temporal: dependencies.temporal.client,
    temporalConnection: dependencies.temporal.connection,
    taskQueue: dependencies.temporal.taskQueue,
  };
  const leadDispatcher = createLeadDispatcher({
    sql,
    temporal: temporal.temporal,
    taskQueue: temporal.taskQueue,
    staleAfterMs: dependencies.sweepLeads?.staleAfterMs,
    sweepIntervalMs: 200,
  });
  if (dependencies.sweepLeads) leadDispatcher.startSweeping();
  afterAll(() => leadDispatcher.stop());
  const startsAfterAnswer = createStartQueue();
  afterAll(() => startsAfterAnswer.stop());
  const services: AppServices = {
    db: dependencies.db,
    sql,
    ...temporal,
    leadDispatcher,
    startsAfterAnswer,
    defaultRateLimitPerMinute: dependencies.defaultRateLimitPerMinute ?? 120,
    simulators: dependencies.simulators ?? 'billed',
    // Every test request comes from 127.0.0.1, and a test's carrier posts all its calls' events: the production limits
    // (api/door/webhook-door.ts) would throttle a busy test. The tests of the limits give their own.
    webhookRateLimits: dependencies.webhookRateLimits ?? { perAddress: 100_000, perConnection: 100_000 },
    exports: {
      dir: defaultTestExportDir,
      inlineMaxRows: 5000,
      retentionSeconds: 24 * 3600,
      pageRows: EXPORT_PAGE_ROWS,
      taskQueue: defaultExportTaskQueue(temporal.taskQueue),
      ...dependencies.exports,
    },
    voicePreviews: dependencies.voicePreviews,
    backgroundAudio: dependencies.backgroundAudio,
    telephonySigningSecrets: dependencies.telephonySigningSecrets ?? { simulated: TEST_CARRIER_SIGNING_SECRET },
    carrierKeyring: dependencies.carrierKeyring ?? TEST_KEYRING,
    egress: dependencies.egress ?? testEgress(),
    publicBaseUrl: dependencies.publicBaseUrl,
    translator: dependencies.translator,
    speech: dependencies.speech,
    whatsapp: dependencies.whatsapp,
    chat: dependencies.chat,
    telnyxAnswerTimeoutMs: dependencies.telnyxAnswerTimeoutMs,
    conversationEngine: dependencies.conversationEngine,
    dialogue: dependencies.dialogue,
    relaySilenceMs: dependencies.relaySilenceMs,
    testMinuteMs: dependencies.testMinuteMs,
    codecServer: dependencies.codecServer,
  };
  const server = createApp(services, { trustProxy: dependencies.trustProxy }).listen(0, '127.0.0.1');
  if (dependencies.sweepQuestionWaits) {
    const questionWaits = createQuestionWaitSweep(services, dependencies.sweepQuestionWaits);
    questionWaits.start();
    afterAll(() => questionWaits.stop());
  }
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const upgrades = routeUpgrades(server);
  const testSessions = attachTestSessionSockets(
    upgrades.route(isTestSessionSocket),
    services,
    dependencies.testSessions,
  );
  const relay = attachConversationRelay(upgrades.rest, services);
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterAll(() => relay.close());
  afterAll(() => testSessions.close());
  afterAll(() => rm(services.exports.dir, { recursive: true, force: true }));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Carriers reach a test API at its own address unless a test puts a proxy in front of it.
  services.publicBaseUrl ??= baseUrl;
  return {
    baseUrl,
    services,
    closeTestSessions: () => testSessions.close(),
    request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      return checkedFetch(`${baseUrl}${path}`, {
        method,
        headers,
        body:
          options.body === undefined
            ? undefined
            : typeof options.body === 'string'
              ? options.body
              : JSON.stringify(options.body),
      });
    },
  };
}

/**
 * fetch for this API: the response is checked against what its route declares for its status (the
 * declarations the OpenAPI description is generated from), and a response that differs fails the test
 * that made the request. The body is read whole and handed back in a new Response.
 */
export async function checkedFetch(
  url: string,
  init: RequestInit = {},
  routeTable: readonly RouteDefinition[] = routes,
): Promise<Response> {
  const response = await fetch(url, init);
  const body = new Uint8Array(await response.arrayBuffer());
  const method = init.method ?? 'GET';
  const problems = responseProblems(routeTable, method, url, {
    status: response.status,
    headers: response.headers,
    body,
  });
  if (problems.length) {
    const excerpt = new TextDecoder().decode(body.slice(0, 300));
    throw new Error(
      `${method} ${new URL(url).pathname} answered ${response.status}, not as declared:\n  ${problems.join('\n  ')}\n  body: ${excerpt}`,
    );
  }
  const bodyless = response.status === 204 || response.status === 304 || method === 'HEAD';
  return new Response(bodyless ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
