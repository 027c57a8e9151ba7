// `npm run simulated-whatsapp`: the simulated WhatsApp provider as its own process (notes "The simulated WhatsApp provider").
import { loadConfigOrExit } from '../../lib/config';
import { createDatabase } from '../../lib/database';
import { createSimulatedWhatsAppProvider } from './server';

const config = loadConfigOrExit();
if (!config.WHATSAPP_APP_SECRET) {
  process.stderr.write('config: WHATSAPP_APP_SECRET is required by the simulated WhatsApp provider\n');
  process.exit(78);
}
const db = createDatabase(config.DATABASE_URL);
const provider = createSimulatedWhatsAppProvider({
  db,
  appSecret: config.WHATSAPP_APP_SECRET,
  webhookUrl: config.SIMULATED_WHATSAPP_WEBHOOK_URL,
  timeScale: config.SIMULATED_WHATSAPP_TIME_SCALE,
});
const url = await provider.listen(config.SIMULATED_WHATSAPP_PORT, config.SIMULATED_WHATSAPP_HOST);
console.log(
  `simulated whatsapp provider listening on ${url}, webhooks to ${config.SIMULATED_WHATSAPP_WEBHOOK_URL} (time scale ${config.SIMULATED_WHATSAPP_TIME_SCALE})`,
);

async function shutdown() {
  await provider.close();
  await db.$disconnect();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
