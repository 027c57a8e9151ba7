import type { Config } from '../../lib/config';
import type { Database } from '../../lib/database';
import { createSimulatedCarrierClient } from '../../telephony/simulated-carrier/client';
import type { Carrier } from './carrier';
import { createSimulatedWhatsApp } from './simulated-whatsapp';
import type { WhatsAppSender } from './whatsapp';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { createSimulatedWhatsAppClient } from '../../whatsapp/simulated-provider/client';

/** The carrier calls are placed through: the simulated carrier's REST API (npm run simulated-carrier). */
export function createCarrier(config: Pick<Config, 'TELEPHONY_PROVIDER' | 'SIMULATED_CARRIER_URL'>): Carrier {
  switch (config.TELEPHONY_PROVIDER) {
    case 'simulated':
      return createSimulatedCarrierClient({ baseUrl: config.SIMULATED_CARRIER_URL });
  }
}

export function createWhatsAppSender(provider: Config['WHATSAPP_PROVIDER'], db: Database): WhatsAppSender {
  switch (provider) {
    case 'simulated':
      return createSimulatedWhatsApp(db);
  }
}

/** The WhatsApp Business provider senders, templates and messages go through: the simulated one's Graph-API-shaped HTTP API (npm run simulated-whatsapp). */
export function createWhatsAppProvider(
  config: Pick<Config, 'WHATSAPP_PROVIDER' | 'SIMULATED_WHATSAPP_URL'>,
): WhatsAppProvider {
  switch (config.WHATSAPP_PROVIDER) {
    case 'simulated':
      return createSimulatedWhatsAppClient({ baseUrl: config.SIMULATED_WHATSAPP_URL });
  }
}
