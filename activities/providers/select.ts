import type { Config } from '../../lib/config';
import type { Database } from '../../lib/database';
import { createSimulatedCarrierClient } from '../../telephony/simulated-carrier/client';
import type { Carrier } from './carrier';
import { createSimulatedWhatsApp } from './simulated-whatsapp';
import type { WhatsAppSender } from './whatsapp';

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
