import { Client, Connection } from '@temporalio/client';
import { loadConfigOrExit } from '../lib/config';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { createApp } from './app';
import { createLeadDispatcher } from './services/lead-dispatch';

const config = loadConfigOrExit();
const db = createDatabase(config.DATABASE_URL);
const sql = createSqlPool(config.DATABASE_URL);
// Lazy: the API starts, and /health reports it, while Temporal is still coming up or is down.
const temporalConnection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
const temporal = new Client({ connection: temporalConnection, namespace: config.TEMPORAL_NAMESPACE });
const taskQueue = config.TEMPORAL_TASK_QUEUE;
const leadDispatcher = createLeadDispatcher({ sql, temporal, temporalConnection, taskQueue });
leadDispatcher.startSweeping();
const app = createApp(
  { db, sql, temporal, temporalConnection, taskQueue, leadDispatcher, defaultRateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE },
  { trustProxy: config.TRUST_PROXY },
);

const server = app.listen(config.PORT, config.HOST, () => {
  console.log(`API listening on http://${config.HOST}:${config.PORT}`);
});

async function shutdown() {
  server.close();
  await leadDispatcher.stop();
  await Promise.allSettled([temporalConnection.close(), db.$disconnect(), sql.end()]);
  process.exit(0);
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
