// The app of bench/intake.ts part (b), in its own process as the API runs (api/main.ts): the same services,
// logging and middleware, the real POST /telephony/{provider}/events, and a bare route behind the same
// middleware (createApp's benchRoutes) that only answers. Env: DATABASE_URL, TEMPORAL_ADDRESS, PORT,
// BENCH_SIGNING_SECRET, BENCH_PROVIDER, LOG_LEVEL. Prints "intake events app listening" once it listens.
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { z } from 'zod';
import { benchTemporalServices } from './bench-app-services';
import { createApp } from '../api/app';
import { defineRoute } from '../api/http/route';
import { telephonyEventRoutes } from '../api/calls/telephony-events-routes';
import { callEventSchema } from '../lib/calls/call-event';
import { createDatabase } from '../lib/database';
import { configureLogging, log, type LogLevel } from '../lib/log';
import { createSqlPool } from '../lib/sql-pool';

const provider = process.env.BENCH_PROVIDER ?? 'simulated';
configureLogging({ level: (process.env.LOG_LEVEL ?? 'info') as LogLevel, service: 'api' });
const db = createDatabase(process.env.DATABASE_URL!);
const sql = createSqlPool(process.env.DATABASE_URL!);
const temporalConnection = Connection.lazy({ address: process.env.TEMPORAL_ADDRESS! });
const temporal = new Client({
  connection: temporalConnection,
  interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
});
const services = {
  ...benchTemporalServices({
    db,
    sql,
    temporal,
    temporalConnection,
    taskQueue: 'bench-intake-events',
    exports: {
      dir: path.join(os.tmpdir(), 'bench-exports'),
      inlineMaxRows: 5000,
      retentionSeconds: 86_400,
      pageRows: 5000,
    },
  }),
  telephonySigningSecrets: { [provider]: process.env.BENCH_SIGNING_SECRET! },
};
/** The event route's params, body and response schemas, answering without signature check or database. */
const bareRoute = defineRoute({
  method: 'post',
  path: '/bench/telephony/{provider}/events',
  access: { public: true },
  summary: 'Bench only: the event route without signature check and database.',
  params: z.object({ provider: z.string() }),
  body: callEventSchema,
  responses: telephonyEventRoutes[0]!.responses,
  handler: async () => ({ status: 200, body: { received: true as const, applied: false } }),
});
const server = createApp(services, { benchRoutes: [bareRoute] }).listen(Number(process.env.PORT), '127.0.0.1', () =>
  log.info({ port: process.env.PORT }, 'intake events app listening'),
);
// Exits on its own (a profile given by --cpu-prof is written at exit), whatever the closes wait for.
process.once('SIGTERM', () => {
  server.close();
  setTimeout(() => process.exit(0), 1_000).unref();
  void Promise.allSettled([sql.end(), db.$disconnect(), temporalConnection.close()]).then(() => process.exit(0));
});
