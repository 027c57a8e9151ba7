import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { bindUnboundNumbers } from './carrier-store';
import { ensureCarrierConnection, type CarrierConnectionView } from './connections';

/**
 * The credentials of the development workspace's connection to the local Twilio twin (docs/features/carriers.md#the-development-twin).
 * Fake by design and public: the twin accepts them, Twilio never would (no account has this SID).
 */
export const TWILIO_TWIN_ACCOUNT_SID = 'ACdeadbeefdeadbeefdeadbeefdeadbeef';
export const TWILIO_TWIN_AUTH_TOKEN = 'twin-auth-token-not-a-real-secret';
export const TWILIO_TWIN_LABEL = 'Development Twilio twin';

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
