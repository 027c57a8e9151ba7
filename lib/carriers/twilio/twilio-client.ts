import type twilio from 'twilio';
import type { OpenedCarrierConnection } from '../../carrier-connections/connections';
import { twilioClientAt } from '../twilio-base-url';

export type TwilioConnection = Extract<OpenedCarrierConnection, { provider: 'twilio' | 'twilio-twin' }>;

/**
 * The official SDK's client for one connection, sent to its base URL (Twilio's public API, a regional edge, or the
 * twin; lib/carriers/twilio-base-url.ts): the auth token, or the API key pair acting for the account. The secrets live
 * in this client only for the operation at hand; nothing here logs them (the SDK logs only with logLevel 'debug',
 * never set), and automatic retries stay off (a create is not idempotent: the dial's own retry finds a call made).
 */
export function twilioClientOf(connection: TwilioConnection): twilio.Twilio {
  const { accountSid, apiKeySid, secrets } = connection;
  return twilioClientAt(
    connection.baseUrl,
    // An API key connection places its calls with the key; the auth token it also holds only checks callbacks.
    'apiKeySecret' in secrets
      ? { accountSid, apiKeySid: apiKeySid!, apiKeySecret: secrets.apiKeySecret }
      : { accountSid, authToken: secrets.authToken },
  );
}
