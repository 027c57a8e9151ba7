// `npm run twilio-twin`: the local twin of Twilio's Programmable Voice as its own process
// (docs/features/carriers/twins.md#the-twilio-twin).
import { configureLogging, log, secretsOfConfig } from '../../lib/log';
import { twinDatabaseProcessSettingsOrExit } from '../twin-common/config';
import { twinPool } from '../twin-common/sql';
import { handleStopSignals } from '../../lib/shutdown';
import { loadTwinConfigOrExit } from './config';
import { createTwilioTwin } from './server';

const config = twinDatabaseProcessSettingsOrExit();
const twinConfig = loadTwinConfigOrExit();
const tokens = twinConfig.TWILIO_TWIN_ACCOUNTS.flatMap((account) => [
  account.authToken,
  ...account.apiKeys.map((key) => key.secret),
]);
configureLogging({
  level: config.LOG_LEVEL,
  service: 'twilio-twin',
  secrets: [...secretsOfConfig(config), ...tokens],
});
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
// Its own pool on the database, for its own schema (call-store.ts): nothing of the product's database client. Every
// call's step and every REST request takes a connection, waiting up to 15 s for one: a burst of calls waits rather
// than failing (a 500 Twilio would not answer).
const { pool, sql } = twinPool(config.DATABASE_URL, {
  size: 20,
  connectionTimeoutMs: 15_000,
  onIdleError: (error) => log.warn({ err: error }, 'twilio twin: an idle database connection failed'),
});
stop.defer('database', () => pool.end());
const twin = createTwilioTwin({
  sql,
  accounts: twinConfig.TWILIO_TWIN_ACCOUNTS,
  timeScale: twinConfig.TWILIO_TWIN_TIME_SCALE,
  callbackDelivery: twinConfig.TWILIO_TWIN_CALLBACK_DELIVERY,
});
// Stops the calls and their callbacks (the next start goes on with them) and closes the server.
stop.defer('twilio twin', () => twin.close());
const url = await twin.listen(twinConfig.TWILIO_TWIN_PORT, twinConfig.TWILIO_TWIN_HOST);
console.log(
  `twilio twin listening on ${url} (time scale ${twinConfig.TWILIO_TWIN_TIME_SCALE}, ${twinConfig.TWILIO_TWIN_ACCOUNTS.length} account(s), callbacks ${twinConfig.TWILIO_TWIN_CALLBACK_DELIVERY})`,
);
