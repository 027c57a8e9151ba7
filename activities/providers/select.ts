import type { Config } from '../../lib/config';
import type { Database } from '../../lib/database';
import { createSimulatedTelephony } from './simulated-telephony';
import type { Telephony } from './telephony';

export function createTelephony(provider: Config['TELEPHONY_PROVIDER'], db: Database): Telephony {
  switch (provider) {
    case 'simulated':
      return createSimulatedTelephony(db);
  }
}
