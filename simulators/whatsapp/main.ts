// `npm run simulated-whatsapp`: the simulated WhatsApp provider as its own process (notes "The simulated WhatsApp provider").
import { configureLogging, log, secretsOfConfig } from '../../lib/log';
import pg from 'pg';
import { loadSimulatedWhatsAppConfigOrExit } from './config';
import { createSimulatedWhatsAppProvider } from './server';
import { handleStopSignals } from '../../lib/shutdown';

const config = loadSimulatedWhatsAppConfigOrExit();
configureLogging({ level: config.LOG_LEVEL, service: 'simulated-whatsapp', secrets: secretsOfConfig(config) });
// SIGTERM/SIGINT run the steps deferred below, the last first, within SHUTDOWN_GRACE_MS (docs/operations-stopping.md).
const stop = handleStopSignals({ graceMs: config.SHUTDOWN_GRACE_MS });
// Its own pool on the database, for its own schema (store.ts): it uses nothing of the product's database client. A
// connection that does not come in 3 s fails the request (a 500 the caller retries) rather than holding it; a
// statement or a transaction left open past a minute is ended by PostgreSQL.
const pool = new pg.Pool({
  connectionString: config.DATABASE_URL,
  max: 10,
  connectionTimeoutMillis: 3_000,
  statement_timeout: 60_000,
  idle_in_transaction_session_timeout: 60_000,
});
// A connection that loses its server fails the query it runs, which its caller handles; unheard, the same error
// (or an idle connection's) would also end the process.
pool.on('error', (error) => log.warn({ err: error }, 'simulated whatsapp: an idle database connection failed'));
pool.on('connect', (client) => client.on('error', () => {}));
stop.defer('database', () => pool.end());
const provider = createSimulatedWhatsAppProvider({
  sql: async <Row>(text: string, ...values: unknown[]) => (await pool.query(text, values)).rows as Row[],
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
