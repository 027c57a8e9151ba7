import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app';
import { createLeadDispatcher } from '../lib/temporal/lead-dispatch';
import { createStartQueue } from '../lib/temporal/start-queue';
import type { AppServices } from '../api/app-services';
import { defaultExportTaskQueue } from '../lib/config';
import type { Database } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { freePort } from '../scripts/stack/child-process';

/** Benches run on the simulators, charged as real providers are: as the tests do (docs/configuration.md#simulators). */
const BENCH_SIMULATORS: AppServices['simulators'] = 'billed';

/** A bench's load comes from one address: measured without the public webhooks' per-address limit. */
const BENCH_WEBHOOK_RATE_LIMITS = { perAddress: 100_000, perConnection: 100_000 };

/**
 * The API's services for benches that run the app in their own process on a real PostgreSQL and need
 * no Temporal: the client points at a free port nothing listens on (connected lazily, never used).
 */
export async function benchAppServices(db: Database, databaseUrl: string, extra: Partial<AppServices> = {}) {
  const temporalConnection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
  const sql = createSqlPool(databaseUrl);
  const temporal = new Client({ connection: temporalConnection });
  const services: AppServices = {
    db,
    sql,
    temporal,
    temporalConnection,
    taskQueue: 'bench',
    simulators: BENCH_SIMULATORS,
    defaultRateLimitPerMinute: 120,
    webhookRateLimits: BENCH_WEBHOOK_RATE_LIMITS,
    leadDispatcher: createLeadDispatcher({ sql, temporal, taskQueue: 'bench' }),
    startsAfterAnswer: createStartQueue(),
    exports: {
      dir: path.join(os.tmpdir(), 'bench-exports'),
      inlineMaxRows: 5000,
      retentionSeconds: 86_400,
      pageRows: 5000,
      taskQueue: 'bench-exports',
    },
    ...extra,
  };
  const close = async () => {
    await sql.end();
    await temporalConnection.close().catch(() => {});
  };
  return { services, close };
}

/**
 * The API's services on the bench's running Temporal (the production routes start workflows there): for
 * benches that run the app in their own process next to real workers.
 */
export function benchTemporalServices(
  setup: Pick<AppServices, 'db' | 'sql' | 'temporal' | 'temporalConnection' | 'taskQueue' | 'exports'>,
): AppServices {
  const { sql, temporal, taskQueue } = setup;
  return {
    ...setup,
    simulators: BENCH_SIMULATORS,
    defaultRateLimitPerMinute: 120,
    webhookRateLimits: BENCH_WEBHOOK_RATE_LIMITS,
    leadDispatcher: createLeadDispatcher({ sql, temporal, taskQueue }),
    startsAfterAnswer: createStartQueue(),
  };
}

/** Export settings for a bench that runs export jobs: files in dir, pages of pageRows, the export worker's queue. */
export const benchExports = (dir: string, pageRows: number, taskQueue: string): AppServices['exports'] => ({
  dir,
  inlineMaxRows: 5000,
  retentionSeconds: 3600,
  pageRows,
  taskQueue: defaultExportTaskQueue(taskQueue),
});

/** The app on a free loopback port, in the bench's process; request() sends JSON with `key` as its bearer. */
export async function serveBenchApp(services: AppServices, key: string) {
  const server = createApp(services).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = (method: string, pathname: string, body?: unknown) =>
    fetch(`${apiUrl}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return { request, close: () => server.close() };
}
