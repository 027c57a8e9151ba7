import http from 'node:http';
import https from 'node:https';
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient';
import { bodyCapError, declaredOverCap, PROVIDER_BODY_CAP_BYTES } from '../http/capped-fetch';

/** The SDK's default request timeout (RequestClient's DEFAULT_TIMEOUT). */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The most of an answer's body read: Twilio's largest answers the product asks for are a page of calls (50 resources
 * of about 2 KB each, ~100 KB). An answer past 1 MiB is not Twilio's, or not one we can use: the request is cut and
 * fails, instead of its body filling the process's memory.
 */
export const TWILIO_BODY_CAP_BYTES = PROVIDER_BODY_CAP_BYTES;

/**
 * Sockets kept open to each host between requests. A dialer sends bursts of creates: the SDK's own agent keeps 5
 * free sockets a host and closes the rest after each burst, so the next burst pays new connections (and TLS
 * handshakes) again.
 */
const KEPT_SOCKETS_PER_HOST = 64;
const agents = {
  'http:': new http.Agent({
    keepAlive: true,
    maxSockets: KEPT_SOCKETS_PER_HOST,
    maxFreeSockets: KEPT_SOCKETS_PER_HOST,
  }),
  'https:': new https.Agent({
    keepAlive: true,
    maxSockets: KEPT_SOCKETS_PER_HOST,
    maxFreeSockets: KEPT_SOCKETS_PER_HOST,
  }),
};

/** A form or query as the SDK's client writes it (qs, arrayFormat "repeat"): a list is its key repeated; undefined is left out. */
function formOf(values: object): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
      if (item === undefined) continue;
      parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(item === null ? '' : String(item as string))}`);
    }
  }
  return parts.join('&');
}

/**
 * The `twilio` SDK's HTTP client, sending each request to another base URL (a regional edge, the local Twilio twin)
 * instead of https://<product>.twilio.com. The SDK has no base-URL option, but takes an `httpClient` of this interface:
 * it still builds every request (path, form, query, Basic auth, headers) and reads every answer; this client only
 * changes the scheme, host and port (plus a path prefix when the base URL has one) and sends it. Paging follows: the
 * SDK makes next_page_uri absolute on its own domain and asks this client for it.
 *
 * It sends on node:http(s) with kept-alive sockets rather than through the SDK's axios client, which cost the dialer
 * about 1.5 ms of CPU a request (docs/benchmarks/twilio-path.md). Where the SDK's client reads the
 * environment for what this one does not do (HTTP_PROXY, TWILIO_CA_BUNDLE), the SDK's client sends instead.
 * Redirects are not followed (the SDK asks for none on the requests the product makes).
 */
export class BaseUrlRequestClient extends twilio.RequestClient {
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly bodyCapBytes: number;

  constructor(
    baseUrl: string,
    options?: ConstructorParameters<typeof twilio.RequestClient>[0] & { bodyCapBytes?: number },
  ) {
    super(options);
    this.base = new URL(baseUrl.replace(/\/+$/, ''));
    this.timeoutMs = options?.timeout ?? DEFAULT_TIMEOUT_MS;
    this.bodyCapBytes = options?.bodyCapBytes ?? TWILIO_BODY_CAP_BYTES;
    // The SDK's own client (sending when HTTP_PROXY or TWILIO_CA_BUNDLE is set) is capped too, by axios's own option.
    this.axios.defaults.maxContentLength = this.bodyCapBytes;
  }

  override async request<TData>(opts: RequestClient.RequestOptions<TData>) {
    const target = new URL(opts.uri);
    const uri = `${this.base.origin}${this.base.pathname.replace(/\/$/, '')}${target.pathname}${target.search}`;
    if (process.env.HTTP_PROXY !== undefined || process.env.TWILIO_CA_BUNDLE !== undefined)
      return super.request<TData>({ ...opts, uri });
    const headers: Record<string, string> = { ...(opts.headers as Record<string, string> | undefined) };
    if (opts.username && opts.password)
      headers.Authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
    else if (opts.authStrategy) headers.Authorization = await opts.authStrategy.getAuthString();
    const url = new URL(uri);
    if (opts.params) {
      const query = formOf(opts.params);
      if (query) url.search = url.search ? `${url.search}&${query}` : `?${query}`;
    }
    let body: string | undefined;
    if (opts.data && headers['Content-Type'] === 'application/x-www-form-urlencoded') body = formOf(opts.data);
    else if (opts.data && headers['Content-Type'] === 'application/json') body = JSON.stringify(opts.data);
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    return await send<TData>(
      url,
      opts.method.toUpperCase(),
      headers,
      body,
      opts.timeout ?? this.timeoutMs,
      this.bodyCapBytes,
    );
  }
}

/** One request; the answer whatever its status (the SDK judges it), its body as text (the SDK parses it). */
function send<TData>(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
  bodyCapBytes: number,
) {
  const transport = url.protocol === 'https:' ? https : http;
  const agent = agents[url.protocol as keyof typeof agents];
  return new Promise<{ statusCode: number; body: TData; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const request = transport.request(url, { method, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const capped = () => request.destroy(bodyCapError(url.host, bodyCapBytes));
      if (declaredOverCap(response.headers['content-length'], bodyCapBytes)) return capped();
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > bodyCapBytes) return capped();
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          statusCode: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8') as TData,
          headers: response.headers,
        }),
      );
    });
    request.setTimeout(timeoutMs, () =>
      request.destroy(Object.assign(new Error(`no answer from ${url.host} in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    request.on('error', reject);
    request.end(body);
  });
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
