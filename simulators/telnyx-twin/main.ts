// `npm run telnyx-twin`: the local twin of Telnyx's Call Control as its own process
// (docs/features/carriers.md#the-telnyx-twin).
import { configureLogging, secretsOfConfig } from '../../lib/log';
import { twinDatabaseProcessSettingsOrExit } from '../twin-common/config';
import { createDatabase } from '../../lib/database';
import { handleStopSignals } from '../../lib/shutdown';
import { loadTelnyxTwinConfigOrExit } from './config';
import { createTelnyxTwin } from './server';

const config = twinDatabaseProcessSettingsOrExit();
const twinConfig = loadTelnyxTwinConfigOrExit();
const secrets = twinConfig.TELNYX_TWIN_ACCOUNTS.flatMap((account) => [...account.apiKeys, account.signingKey]);
configureLogging({
  level: config.LOG_LEVEL,
  service: 'telnyx-twin',
  secrets: [...secretsOfConfig(config), ...secrets],
});
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
const db = createDatabase(config.DATABASE_URL);
stop.defer('database', () => db.$disconnect());
const twin = createTelnyxTwin({
  db,
  accounts: twinConfig.TELNYX_TWIN_ACCOUNTS,
  timeScale: twinConfig.TELNYX_TWIN_TIME_SCALE,
  webhookDelivery: twinConfig.TELNYX_TWIN_WEBHOOK_DELIVERY,
});
// Stops the calls and their webhooks (the next start goes on with them) and closes the server.
stop.defer('telnyx twin', () => twin.close());
const url = await twin.listen(twinConfig.TELNYX_TWIN_PORT, twinConfig.TELNYX_TWIN_HOST);
console.log(
  `telnyx twin listening on ${url} (time scale ${twinConfig.TELNYX_TWIN_TIME_SCALE}, ${twinConfig.TELNYX_TWIN_ACCOUNTS.length} account(s), webhooks ${twinConfig.TELNYX_TWIN_WEBHOOK_DELIVERY})`,
);
