import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

// The one way out for requests whose URL tenant data can touch (docs/egress.md). request-filtering-agent refuses, at
// connect time, every address ipaddr.js does not call unicast: the address it checks is the one the socket is then
// given, so a name cannot resolve to a public address for the check and to a private one for the connection. This
// module adds what the agent leaves open (IPv4-compatible IPv6, ::/96, which ipaddr.js calls unicast), the
// deployment's allowances (EGRESS_ALLOW_ADDRESSES, EGRESS_ALLOW_HTTP), a size cap and the timeouts, and reduces
// every failure to one of three words so that a tenant cannot tell a refused address from a closed port.

/** What a failed request says, and all it says: neither the address reached nor the socket's error. */
export type EgressFailure = 'refused' | 'timed out' | 'too large';

export class EgressError extends Error {
  constructor(readonly failure: EgressFailure) {
    super(failure);
    this.name = 'EgressError';
  }
}

/** The deployment's allowances (lib/config.ts): none in production. */
export interface EgressSettings {
  /** Plain http:// allowed (development, tests, twins); otherwise https only. */
  allowHttp: boolean;
  /** Addresses or CIDR ranges allowed although special (loopback for the test stack's receivers). */
  allowAddresses: readonly string[];
}

/** What the test stack and the history recorder allow: their receivers listen on loopback, over http. */
export const LOOPBACK_ALLOWANCES: EgressSettings = Object.freeze({
  allowHttp: true,
  allowAddresses: Object.freeze(['127.0.0.0/8', '::1/128']),
});

/** One resolution of a name: every address it has. Injected by tests (a resolver that rebinds). */
export type EgressResolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface EgressOptions extends Partial<EgressSettings> {
  resolve?: EgressResolve;
  /** Default for requests that do not say (DEFAULT_MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
  /** Until the socket is connected (DEFAULT_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** Until the whole answer is read (DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
}

export interface EgressRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  /** false: the body is not read (a result webhook wants the status only); the socket is closed at the headers. */
  readBody?: boolean;
  maxResponseBytes?: number;
  timeoutMs?: number;
}

export interface EgressResponse {
  status: number;
  /** The body as text ('' when not read). A redirect is answered as it is (3xx), never followed. */
  text: string;
}

/** A journey webhook's answer lands in the run's variables (Temporal payloads, the run's row): 256 KiB is plenty for JSON. */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_TIMEOUT_MS = 10_000;

const systemResolve: EgressResolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** ::/96 (IPv4-compatible, deprecated) embeds an IPv4 address; ipaddr.js calls it unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An address (a range of one) or a CIDR range. */
function parseRange(entry: string): Range {
  return entry.includes('/') ? ipaddr.parseCIDR(entry) : ipaddr.parseCIDR(`${entry}/${entry.includes(':') ? 128 : 32}`);
}

/** For the configuration's check of EGRESS_ALLOW_ADDRESSES. */
export function isAddressOrRange(entry: string): boolean {
  try {
    parseRange(entry);
    return true;
  } catch {
    return false;
  }
}

/** Whether an address may be connected to: a public unicast one, or one the deployment allows. */
export function addressAllowed(address: string, allowed: readonly Range[] = []): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  // Matched within its own family only: ipaddr.js throws on a v4 range against a v6 address.
  if (allowed.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits))) return true;
  if (parsed.range() !== 'unicast') return false;
  return !(parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE));
}

export function createEgress(options: EgressOptions = {}) {
  const allowed = (options.allowAddresses ?? []).map(parseRange);
  const allowHttp = options.allowHttp ?? false;
  const resolve = options.resolve ?? systemResolve;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  // With allowances the agent's own check would refuse them: then this module's check (the same ranges, plus the
  // allowances) is the one that decides, in the same lookup hook. The unspecified address stays refused either way.
  const agentOptions = { keepAlive: false, allowPrivateIPAddress: allowed.length > 0, allowMetaIPAddress: false };
  const agents = {
    'http:': new RequestFilteringHttpAgent(agentOptions),
    'https:': new RequestFilteringHttpsAgent(agentOptions),
  };

  // The name resolved once per connection; the socket connects to what this answered, nothing else.
  const lookup: net.LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (!addresses.length || !addresses.every(({ address }) => addressAllowed(address, allowed)))
          return callback(new EgressError('refused'), '', 0);
        if (lookupOptions.all) return (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
        const [first] = addresses;
        callback(null, first!.address, first!.family);
      },
      () => callback(new EgressError('refused'), '', 0),
    );
  };

  async function request(url: string, init: EgressRequest): Promise<EgressResponse> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new EgressError('refused');
    }
    if (target.protocol !== 'https:' && !(allowHttp && target.protocol === 'http:')) throw new EgressError('refused');
    if (target.username || target.password) throw new EgressError('refused');
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    // A literal address is never looked up: it is checked here (and by the agent), as a resolved one would be.
    if (net.isIP(host) && !addressAllowed(host, allowed)) throw new EgressError('refused');
    const maxBytes = init.maxResponseBytes ?? options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const timeoutMs = init.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const payload = init.body === undefined ? undefined : Buffer.from(init.body);

    return new Promise<EgressResponse>((resolvePromise, reject) => {
      let settled = false;
      const finish = (outcome: EgressResponse | EgressError) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        clearTimeout(connecting);
        if (outcome instanceof EgressError) {
          outgoing.destroy();
          reject(outcome);
        } else resolvePromise(outcome);
      };
      const outgoing = (target.protocol === 'https:' ? https : http).request(target, {
        method: init.method,
        agent: agents[target.protocol as 'http:' | 'https:'],
        lookup,
        headers: { ...init.headers, ...(payload && { 'content-length': String(payload.length) }) },
      });
      const total = setTimeout(() => finish(new EgressError('timed out')), timeoutMs);
      const connecting = setTimeout(() => finish(new EgressError('timed out')), Math.min(connectTimeoutMs, timeoutMs));
      outgoing.on('socket', (socket) => {
        const connected = () => clearTimeout(connecting);
        if (!socket.connecting) connected();
        else socket.once('connect', connected);
      });
      // Whatever the cause (refused address, closed port, unknown name, TLS), the tenant learns "refused".
      outgoing.on('error', (error) => finish(error instanceof EgressError ? error : new EgressError('refused')));
      outgoing.on('response', (response) => {
        const status = response.statusCode ?? 0;
        if (init.readBody === false) {
          response.destroy();
          return finish({ status, text: '' });
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) return finish(new EgressError('too large'));
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) return finish(new EgressError('too large'));
          chunks.push(chunk);
        });
        response.on('end', () => finish({ status, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', () => finish(new EgressError('refused')));
      });
      outgoing.end(payload);
    });
  }

  return {
    request,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

export type Egress = ReturnType<typeof createEgress>;
