// `npm run simulated-carrier`: the simulated carrier as its own process (docs/features/calls.md#the-simulated-carrier).
import { configureLogging, log, secretsOfConfig } from '../../lib/log';
import { twinPool } from '../twin-common/sql';
import { loadSimulatedCarrierConfigOrExit } from './config';
import { createSimulatedCarrier } from './server';
import { handleStopSignals } from '../../lib/shutdown';

const config = loadSimulatedCarrierConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'simulated-carrier', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
// Its own pool on the database, for its own schema (call-store.ts): nothing of the product's database client. A burst
// of dials waits up to 15 s for a connection rather than failing.
const { pool, sql } = twinPool(config.DATABASE_URL, {
  size: 20,
  connectionTimeoutMs: 15_000,
  onIdleError: (error) => log.warn({ err: error }, 'simulated carrier: an idle database connection failed'),
});
stop.defer('database', () => pool.end());
const carrier = createSimulatedCarrier({
  sql,
  signingSecret: config.SIMULATED_CARRIER_SIGNING_SECRET,
  timeScale: config.SIMULATED_CARRIER_TIME_SCALE,
});
// Stops delivering status events (those left are delivered by the next start) and closes the server.
stop.defer('simulated carrier', () => carrier.close());
const url = await carrier.listen(config.SIMULATED_CARRIER_PORT, config.SIMULATED_CARRIER_HOST);
console.log(`simulated carrier listening on ${url} (time scale ${config.SIMULATED_CARRIER_TIME_SCALE})`);
