import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import type { Database } from '../../lib/database';
import { keyringSchema, newKeyringEntry, type Keyring } from '../../lib/secrets/keyring';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import type { TestApiDependencies } from './api';
import { startTestCarrier } from './carrier';
import { connectCallers, startCarrierPath, TWILIO_TWIN_ACCOUNT } from './carrier-calls';
import type { useTemporalClient } from './temporal';
import { startTestTwilioTwin } from './twilio-twin';

/**
 * The real servers a Twilio-twin call runs on, for one test file: the twin (its account, at 1/50 of real time), the
 * simulated carrier as the fallback, the API with a key ring and a worker dialing through the workspace's connections
 * (and sending WhatsApp messages through `workerOptions.whatsappProvider`, when given).
 */
export async function startTwilioTwinStack(
  { db, url, temporal }: { db: Database; url: string; temporal: Awaited<ReturnType<typeof useTemporalClient>> },
  apiOptions: Partial<TestApiDependencies> = {},
  workerOptions: { whatsappProvider?: WhatsAppProvider; callEndDeadlineMs?: number } = {},
) {
  const keyring = keyringSchema.parse(newKeyringEntry('k1'));
  const twin = await startTestTwilioTwin(db, {
    timeScale: 0.02,
    accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN }],
  });
  const simulated = await startTestCarrier(db);
  const { api } = await startCarrierPath(db, {
    url,
    temporal,
    keyring,
    fallback: simulated.client,
    api: apiOptions,
    ...workerOptions,
  });
  return { keyring, twin, simulated, api };
}

/** The workspace's connection to the twin's account, with `caller` assigned to it. */
export const connectTwinCaller = (
  db: Database,
  keyring: Keyring,
  twinBaseUrl: string,
  workspaceId: string,
  caller: string,
) =>
  connectCallers(
    db,
    keyring,
    { workspaceId, provider: 'twilio-twin', baseUrl: twinBaseUrl, account: TWILIO_TWIN_ACCOUNT },
    caller,
  );
