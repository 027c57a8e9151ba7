// `npm run telnyx-twin`: the local twin of Telnyx's Call Control as its own process
// (docs/features/carriers/twins.md#the-telnyx-twin).
import { configureLogging, log, secretsOfConfig } from '../../lib/log';
import { twinDatabaseProcessSettingsOrExit } from '../twin-common/config';
import { twinPool } from '../twin-common/sql';
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
// Its own pool on the database, for its own schema (call-store.ts): nothing of the product's database client.
const { pool, sql } = twinPool(config.DATABASE_URL, {
  size: 10,
  connectionTimeoutMs: 15_000,
  onIdleError: (error) => log.warn({ err: error }, 'telnyx twin: an idle database connection failed'),
});
stop.defer('database', () => pool.end());
const twin = createTelnyxTwin({
  sql,
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
