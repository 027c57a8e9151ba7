import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import type { OpenedCarrierConnection } from '../connections';

export type TwilioConnection = Extract<OpenedCarrierConnection, { provider: 'twilio' | 'twilio-twin' }>;

/** Every request to Twilio gives up after this long: the dial runs inside a 30 s local activity, retried. */
export const TWILIO_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The origin (and any path prefix) of `baseUrl` in place of the SDK's: the SDK builds each request for
 * https://api.twilio.com and has no option to send it elsewhere, so only the address is swapped; the path,
 * query, headers, authentication and form body stay exactly as the SDK built them.
 */
export function rebasedUri(uri: string, baseUrl: string): string {
  const parsed = new URL(uri);
  return `${baseUrl}${parsed.pathname}${parsed.search}`;
}

/** The SDK's own HTTP client (axios under it), sending to the connection's base URL: a regional edge or a twin. */
class BaseUrlRequestClient extends RequestClient {
  constructor(private readonly baseUrl: string) {
    // No automatic retry: a create is not idempotent, and the dial's own retry knows how to find a call made.
    super({ autoRetry: false, timeout: TWILIO_REQUEST_TIMEOUT_MS });
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>) {
    return super.request({ ...opts, uri: rebasedUri(opts.uri, this.baseUrl) });
  }
}

/**
 * The official SDK's client for one connection: the auth token, or the API key pair on the account. The secrets
 * live in this client only for the call being placed; nothing here logs them (the SDK logs only with
 * logLevel 'debug', never set).
 */
export function twilioClientOf(connection: TwilioConnection): twilio.Twilio {
  const options = {
    accountSid: connection.accountSid,
    httpClient: new BaseUrlRequestClient(connection.baseUrl),
    autoRetry: false,
  };
  return 'authToken' in connection.secrets
    ? twilio(connection.accountSid, connection.secrets.authToken, options)
    : twilio(connection.apiKeySid!, connection.secrets.apiKeySecret, options);
}
