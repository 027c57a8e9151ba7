// `npm run simulated-carrier`: the simulated carrier as its own process (docs/features/calls.md#the-simulated-carrier).
import { loadConfigOrExit } from '../../lib/config';
import { createDatabase } from '../../lib/database';
import { poolSql } from '../../lib/run-sql';
import { createSqlPool } from '../../lib/sql-pool';
import { createSimulatedCarrier } from './server';

const config = loadConfigOrExit();
if (!config.SIMULATED_CARRIER_SIGNING_SECRET) {
  process.stderr.write('config: SIMULATED_CARRIER_SIGNING_SECRET is required by the simulated carrier\n');
  process.exit(78);
}
const db = createDatabase(config.DATABASE_URL);
// Its hot statements (a dial recorded, a delivery written down) on a pg pool of its own.
const pool = createSqlPool(config.DATABASE_URL);
const carrier = createSimulatedCarrier({
  db,
  sql: poolSql(pool),
  signingSecret: config.SIMULATED_CARRIER_SIGNING_SECRET,
  timeScale: config.SIMULATED_TELEPHONY_TIME_SCALE,
});
const url = await carrier.listen(config.SIMULATED_CARRIER_PORT, config.SIMULATED_CARRIER_HOST);
console.log(`simulated carrier listening on ${url} (time scale ${config.SIMULATED_TELEPHONY_TIME_SCALE})`);

async function shutdown() {
  await carrier.close();
  await db.$disconnect();
  await pool.end();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
