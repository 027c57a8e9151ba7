import type { Config } from './config';
import type { Database } from './database';
import { createSimulatedCarrierClient } from '../simulators/carrier/client';
import type { Carrier } from './calls/carrier';
import { createSimulatedWhatsApp } from './whatsapp/simulated-whatsapp';
import type { WhatsAppSender } from './whatsapp/sender';
import type { WhatsAppProvider } from './whatsapp/provider';
import { createSimulatedWhatsAppClient } from '../simulators/whatsapp/client';

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
