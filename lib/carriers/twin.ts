import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { bindUnboundNumbers } from '../carrier-connections/carrier-store';
import { ensureCarrierConnection, type CarrierConnectionView } from '../carrier-connections/connections';

/**
 * The credentials of the development workspace's connection to the local Twilio twin (docs/features/carriers/connections.md#the-development-twin).
 * Fake by design and public: the twin accepts them, Twilio never would (no account has this SID). The twins keep their
 * own record of their development accounts (simulators/twilio-twin/config.ts, simulators/telnyx-twin/config.ts), as a
 * provider keeps its accounts; test/import-rules.test.ts holds these equal to them.
 */
export const TWILIO_TWIN_ACCOUNT_SID = 'ACdeadbeefdeadbeefdeadbeefdeadbeef';
export const TWILIO_TWIN_AUTH_TOKEN = 'twin-auth-token-not-a-real-secret';
export const TWILIO_TWIN_LABEL = 'Development Twilio twin';

/**
 * The development account of the local Telnyx twin (simulators/telnyx-twin/, docs/features/carriers/twins.md#the-telnyx-twin):
 * an API key, a Call Control connection (application) id, and the Ed25519 key pair its webhooks are signed with. A
 * `telnyx-twin` connection stores the API key and the public key (base64 of its 32 bytes, as Telnyx's portal shows
 * it); the twin signs with the private key (base64 of its 32-byte seed). Fake and public like the Twilio twin's: the
 * twin accepts them, Telnyx never would, and a webhook signed with this key proves nothing outside development.
 */
export const TELNYX_TWIN_API_KEY = 'KEYtelnyxtwin_not_a_real_secret_0123456789';
export const TELNYX_TWIN_CONNECTION_ID = '1700000000000000001';
export const TELNYX_TWIN_PUBLIC_KEY = 'vFU1K+KSPH4P/9fIAC0qGby4Ro/BkJ7ofLLHFLwJtxA=';
export const TELNYX_TWIN_PRIVATE_KEY = 'LdK0H5qsjxD0RKKOHGz0kqLqqMJh2iECdTTb5PZ58uU=';
export const TELNYX_TWIN_LABEL = 'Development Telnyx twin';

/**
 * The workspace's connection to the Twilio twin at `baseUrl`, made once and kept up to date, and every number of
 * the workspace bound to no connection bound to it (numbers bound elsewhere are left as they are).
 */
export async function ensureTwilioTwinConnection(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  baseUrl: string,
): Promise<{ connection: CarrierConnectionView; numbersBound: number }> {
  const connection = await ensureCarrierConnection(db, keyring, {
    workspaceId,
    provider: 'twilio-twin',
    label: TWILIO_TWIN_LABEL,
    baseUrl,
    account: { family: 'twilio', accountSid: TWILIO_TWIN_ACCOUNT_SID, secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN } },
  });
  return { connection, numbersBound: await bindUnboundNumbers(db, workspaceId, connection.id) };
}

/**
 * The workspace's connection to the Telnyx twin at `baseUrl` (its `/v2`), made once and kept up to date, like the
 * Twilio twin's. It binds no number: the workspace's numbers stay on the connection they have (the Twilio twin's, in
 * development), and a number is moved to Telnyx with `number assign --carrier-connection`.
 */
export async function ensureTelnyxTwinConnection(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  baseUrl: string,
): Promise<CarrierConnectionView> {
  return ensureCarrierConnection(db, keyring, {
    workspaceId,
    provider: 'telnyx-twin',
    label: TELNYX_TWIN_LABEL,
    baseUrl,
    account: {
      family: 'telnyx',
      connectionId: TELNYX_TWIN_CONNECTION_ID,
      secrets: { apiKey: TELNYX_TWIN_API_KEY, publicKey: TELNYX_TWIN_PUBLIC_KEY },
    },
  });
}
