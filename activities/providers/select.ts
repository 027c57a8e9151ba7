import type { Config } from '../../lib/config';
import { createSimulatedTelephony } from './simulated-telephony';
import type { Telephony } from './telephony';

export function createTelephony(provider: Config['TELEPHONY_PROVIDER']): Telephony {
  switch (provider) {
    case 'simulated':
      return createSimulatedTelephony();
  }
}
