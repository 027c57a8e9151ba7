import Telnyx from 'telnyx';
import { cappedFetch, PROVIDER_BODY_CAP_BYTES } from '../../http/capped-fetch';
import type { OpenedCarrierConnection } from '../../carrier-connections/connections';

export type TelnyxConnection = Extract<OpenedCarrierConnection, { provider: 'telnyx' | 'telnyx-twin' }>;

/**
 * The official SDK's client for one connection, at its base URL (Telnyx's https://api.telnyx.com/v2, or the twin's
 * http://host:3400/v2): its API key, and its webhook public key for `webhooks.unwrap`. Only the base URL and the
 * credentials differ between the twin and Telnyx. Its answers are capped (TELNYX_BODY_CAP_BYTES). Automatic retries stay off: a retried dial is sent by the attempt's
 * own retry with the same command_id, which Telnyx ignores, and nothing else should be sent twice behind its back.
 */
/**
 * The most of a Telnyx answer read: its call-control and messaging answers are a resource of about 1 KB, its pages a
 * few dozen; past 1 MiB an answer is not one the product can use and the request fails (`EBODYCAP`).
 */
export const TELNYX_BODY_CAP_BYTES = PROVIDER_BODY_CAP_BYTES;

export function telnyxClientOf(connection: TelnyxConnection): Telnyx {
  return new Telnyx({
    apiKey: connection.secrets.apiKey,
    publicKey: connection.secrets.publicKey,
    baseURL: connection.baseUrl,
    maxRetries: 0,
    timeout: 30_000,
    logLevel: 'off',
    fetch: cappedFetch(TELNYX_BODY_CAP_BYTES),
  });
}
