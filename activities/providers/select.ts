import type { Config } from '../../lib/config';
import type { Database } from '../../lib/database';
import { createSimulatedTelephony } from './simulated-telephony';
import type { Telephony } from './telephony';
import { createSimulatedWhatsApp } from './simulated-whatsapp';
import type { WhatsAppSender } from './whatsapp';

export function createTelephony(provider: Config['TELEPHONY_PROVIDER'], db: Database): Telephony {
  switch (provider) {
    case 'simulated':
      return createSimulatedTelephony(db);
  }
}

export function createWhatsAppSender(provider: Config['WHATSAPP_PROVIDER'], db: Database): WhatsAppSender {
  switch (provider) {
    case 'simulated':
      return createSimulatedWhatsApp(db);
  }
}
