// `npm run twilio-twin`: the local twin of Twilio's Programmable Voice as its own process
// (docs/features/carriers.md#the-twilio-twin).
import { configureLogging, secretsOfConfig } from '../../lib/log';
import { twinDatabaseProcessSettingsOrExit } from '../twin-common/config';
import { createDatabase } from '../../lib/database';
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
// Every call's loop and every REST request take a transaction: a burst of calls waits for a connection rather than
// failing (a 500 Twilio would not answer).
const db = createDatabase(config.DATABASE_URL, { poolSize: 20, transactionMaxWaitMs: 15_000 });
stop.defer('database', () => db.$disconnect());
const twin = createTwilioTwin({
  db,
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
