import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import { connectCarrier } from '../../lib/carriers/connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import type { Database } from '../../lib/database';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry, type Keyring } from '../../lib/secrets/keyring';
import { startTestApi, type TestApiDependencies } from './api';
import { startTestCarrier } from './carrier';
import { startTestWorker, type useTemporalClient } from './temporal';
import { startTestTwilioTwin } from './twilio-twin';

/**
 * The real servers a Twilio-twin call runs on, for one test file: the twin (its account, at 1/50 of real time), the
 * simulated carrier as the fallback, the API with a key ring and a worker dialing through the workspace's connections.
 */
export async function startTwilioTwinStack(
  { db, url, temporal }: { db: Database; url: string; temporal: Awaited<ReturnType<typeof useTemporalClient>> },
  apiOptions: Partial<TestApiDependencies> = {},
) {
  const keyring = keyringSchema.parse(newKeyringEntry('k1'));
  const twin = await startTestTwilioTwin(db, {
    timeScale: 0.02,
    accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN }],
  });
  const simulated = await startTestCarrier(db);
  const api = await startTestApi({ db, url, temporal, carrierKeyring: keyring, ...apiOptions });
  await startTestWorker(temporal.taskQueue, {
    db,
    calls: createConnectionCarrier({ db, keyring, fallback: simulated.client, publicBaseUrl: api.baseUrl }),
    statusCallbackBaseUrl: api.baseUrl,
  });
  return { keyring, twin, simulated, api };
}

/** The workspace's connection to the twin's account, with `caller` assigned to it. */
export async function connectTwinCaller(
  db: Database,
  keyring: Keyring,
  twinBaseUrl: string,
  workspaceId: string,
  caller: string,
) {
  const connection = await connectCarrier(db, keyring, {
    workspaceId,
    provider: 'twilio-twin',
    baseUrl: twinBaseUrl,
    account: { family: 'twilio', accountSid: TWILIO_TWIN_ACCOUNT_SID, secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN } },
  });
  await assignPhoneNumber(db, workspaceId, caller, undefined, connection.id);
  return connection;
}
