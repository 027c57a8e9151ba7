// `npm run simulated-carrier`: the simulated carrier as its own process (docs/features/calls.md#the-simulated-carrier).
import { configureLogging, secretsOfConfig } from '../../lib/log';
import { createDatabase } from '../../lib/database';
import { poolSql } from '../../lib/run-sql';
import { createSqlPool } from '../../lib/sql-pool';
import { loadSimulatedCarrierConfigOrExit } from './config';
import { createSimulatedCarrier } from './server';
import { handleStopSignals } from '../../lib/shutdown';

const config = loadSimulatedCarrierConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'simulated-carrier', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
const db = createDatabase(config.DATABASE_URL);
stop.defer('database', () => db.$disconnect());
// Its hot statements (a dial recorded, a delivery written down) on a pg pool of its own.
const pool = createSqlPool(config.DATABASE_URL);
stop.defer('database pool', () => pool.end());
const carrier = createSimulatedCarrier({
  db,
  sql: poolSql(pool),
  signingSecret: config.SIMULATED_CARRIER_SIGNING_SECRET,
  timeScale: config.SIMULATED_TELEPHONY_TIME_SCALE,
});
// Stops delivering status events (those left are delivered by the next start) and closes the server.
stop.defer('simulated carrier', () => carrier.close());
const url = await carrier.listen(config.SIMULATED_CARRIER_PORT, config.SIMULATED_CARRIER_HOST);
console.log(`simulated carrier listening on ${url} (time scale ${config.SIMULATED_TELEPHONY_TIME_SCALE})`);
