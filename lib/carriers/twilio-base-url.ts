import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient';

/**
 * The `twilio` SDK's own HTTP client, sending each request to another base URL (a regional edge, the local Twilio
 * twin) instead of https://<product>.twilio.com. The SDK has no base-URL option, but takes an `httpClient`: this one
 * keeps everything the SDK builds (path, form body, query, Basic auth, headers) and changes only the scheme, host and
 * port, plus a path prefix when the base URL has one. Paging follows: the SDK makes next_page_uri absolute on its own
 * domain and asks this client for it.
 */
export class BaseUrlRequestClient extends twilio.RequestClient {
  private readonly base: URL;

  constructor(baseUrl: string, options?: ConstructorParameters<typeof twilio.RequestClient>[0]) {
    super(options);
    this.base = new URL(baseUrl.replace(/\/+$/, ''));
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>) {
    const target = new URL(opts.uri);
    const uri = `${this.base.origin}${this.base.pathname.replace(/\/$/, '')}${target.pathname}${target.search}`;
    return super.request<TData>({ ...opts, uri });
  }
}

/**
 * A `twilio` client for an account, at a base URL: with the account's auth token, or with an API key (`SK...`) and its
 * secret acting for the account. Automatic retries stay off: a create is not idempotent.
 */
export function twilioClientAt(
  baseUrl: string,
  credentials: { accountSid: string } & ({ authToken: string } | { apiKeySid: string; apiKeySecret: string }),
): twilio.Twilio {
  const httpClient = new BaseUrlRequestClient(baseUrl, { autoRetry: false });
  return 'authToken' in credentials
    ? twilio(credentials.accountSid, credentials.authToken, { httpClient })
    : twilio(credentials.apiKeySid, credentials.apiKeySecret, { accountSid: credentials.accountSid, httpClient });
}
