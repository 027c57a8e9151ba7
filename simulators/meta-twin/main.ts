// `npm run simulated-whatsapp`: Meta's WhatsApp Cloud API twin (server.ts says why one server is both) as its own
// process: the simulated WhatsApp provider, or the Meta twin when META_TWIN_ACCOUNTS is set
// (docs/features/whatsapp/simulated-provider.md).
import { configureLogging, log, secretsOfConfig } from '../../lib/log';
import { twinPool } from '../twin-common/sql';
import { loadSimulatedWhatsAppConfigOrExit } from './config';
import { createSimulatedWhatsAppProvider } from './server';
import { handleStopSignals } from '../../lib/shutdown';

const config = loadSimulatedWhatsAppConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'simulated-whatsapp', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
// Its own pool on the database, for its own schema (store.ts): nothing of the product's database client.
const { pool, sql } = twinPool(config.DATABASE_URL, {
  size: 10,
  connectionTimeoutMs: 3_000,
  onIdleError: (error) => log.warn({ err: error }, 'simulated whatsapp: an idle database connection failed'),
});
stop.defer('database', () => pool.end());
const provider = createSimulatedWhatsAppProvider({
  sql,
  appSecret: config.WHATSAPP_APP_SECRET,
  webhookUrl: config.SIMULATED_WHATSAPP_WEBHOOK_URL,
  timeScale: config.SIMULATED_WHATSAPP_TIME_SCALE,
  // META_TWIN_ACCOUNTS set: Meta's twin (the Bearer token required, the WABA in entry.id, examples required).
  ...(config.META_TWIN_ACCOUNTS && { accounts: config.META_TWIN_ACCOUNTS }),
});
// Stops delivering webhooks (those left are delivered by the next start) and closes the server.
stop.defer('simulated whatsapp provider', () => provider.close());
const url = await provider.listen(config.SIMULATED_WHATSAPP_PORT, config.SIMULATED_WHATSAPP_HOST);
console.log(
  `simulated whatsapp provider${config.META_TWIN_ACCOUNTS ? ' (Meta twin)' : ''} listening on ${url}, webhooks to ${config.SIMULATED_WHATSAPP_WEBHOOK_URL} (time scale ${config.SIMULATED_WHATSAPP_TIME_SCALE})`,
);
