import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createEgress, EgressError, type EgressResolve } from '../../lib/http/egress';

// The egress guard (lib/http/egress.ts) against real sockets on this machine. Every refusal below is aimed at a
// server that is listening (the "inside" server on 127.0.0.1): a refusal is the guard's, not a closed port's, and
// the inside server must never see a request. Names are resolved by an injected resolver, so no test asks a real
// DNS server or leaves the machine; "public" is played by 127.0.0.2, which a test's guard allows explicitly.

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

async function serve(host: string, handler: Handler) {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, hits };
}

const inside = await serve('127.0.0.1', (_request, response) => response.end('the secret of the inside'));
const P = inside.port;
const PUBLIC = '127.0.0.2';

/** A resolver answering from a table, counting its calls: a name it does not know does not exist. */
function resolverOf(table: Record<string, string[] | (() => string[])>) {
  const calls: string[] = [];
  const resolve: EgressResolve = async (hostname) => {
    calls.push(hostname);
    const entry = table[hostname];
    const addresses = typeof entry === 'function' ? entry() : entry;
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

const outcome = (promise: Promise<{ status: number; text: string }>) =>
  promise.then(
    (response) => `answered ${response.status}`,
    (error: unknown) => (error instanceof EgressError ? error.failure : `threw ${String(error)}`),
  );

describe('the production guard: no allowance but http (so that the address alone decides)', () => {
  const names = resolverOf({
    localhost: ['127.0.0.1', '::1'],
    'inside.example': ['127.0.0.1'],
    'private.example': ['10.0.0.5'],
    'metadata.example': ['169.254.169.254'],
    'mixed.example': ['93.184.216.34', '192.168.1.10'],
    'mapped.example': ['::ffff:127.0.0.1'],
  });
  const guard = createEgress({ allowHttp: true, resolve: names.resolve });
  afterAll(() => guard.close());

  // The egress matrix: target → what the tenant sees. Every one is aimed at the inside server's port.
  const MATRIX: Array<[target: string, expected: string]> = [
    ['127.0.0.1', 'refused'],
    ['127.1', 'refused'],
    ['2130706433', 'refused'],
    ['0x7f000001', 'refused'],
    ['0177.0.0.1', 'refused'],
    ['localhost', 'refused'],
    ['0.0.0.0', 'refused'],
    ['10.0.0.1', 'refused'],
    ['172.16.0.1', 'refused'],
    ['172.31.255.254', 'refused'],
    ['192.168.1.1', 'refused'],
    ['100.64.0.1', 'refused'],
    ['169.254.1.1', 'refused'],
    ['169.254.169.254', 'refused'],
    ['224.0.0.1', 'refused'],
    ['255.255.255.255', 'refused'],
    ['240.0.0.1', 'refused'],
    ['[::1]', 'refused'],
    ['[::]', 'refused'],
    ['[fe80::1]', 'refused'],
    ['[fc00::1]', 'refused'],
    ['[fd00:ec2::254]', 'refused'],
    ['[::ffff:7f00:1]', 'refused'],
    ['[::ffff:127.0.0.1]', 'refused'],
    ['[::127.0.0.1]', 'refused'],
    ['[64:ff9b::7f00:1]', 'refused'],
    ['[2002:7f00:1::]', 'refused'],
    ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'refused'],
    ['[ff02::1]', 'refused'],
    ['inside.example', 'refused'],
    ['private.example', 'refused'],
    ['metadata.example', 'refused'],
    ['mixed.example', 'refused'],
    ['mapped.example', 'refused'],
    ['nowhere.example', 'refused'],
  ];

  it('refuses loopback, private, link-local, metadata, CGNAT, multicast, reserved, IPv4-mapped/compatible, NAT64, 6to4 and Teredo targets, literal or resolved', async () => {
    const seen: Array<[string, string]> = [];
    for (const [target] of MATRIX)
      seen.push([target, await outcome(guard.request(`http://${target}:${P}/secret`, { method: 'GET' }))]);
    expect(seen).toEqual(MATRIX);
    expect(inside.hits).toEqual([]);
    // localhost and the names go through the resolver; the literal addresses never do.
    expect(names.calls.sort()).toEqual(
      [
        'inside.example',
        'localhost',
        'mapped.example',
        'metadata.example',
        'mixed.example',
        'nowhere.example',
        'private.example',
      ].sort(),
    );
  });

  const production = resolverOf({ 'api.example': [PUBLIC] });
  const strict = createEgress({ resolve: production.resolve, allowAddresses: [PUBLIC] });
  const allowing = createEgress({ allowHttp: true, allowAddresses: ['127.0.0.0/8'] });
  const system = createEgress({ allowHttp: true });
  afterAll(() => [strict, allowing, system].forEach((each) => each.close()));

  it('refuses http:// without the allowance, and any scheme but http(s), before resolving anything', async () => {
    for (const url of ['http://api.example/hook', 'ftp://api.example/hook', 'file:///etc/passwd', 'not a url'])
      expect(await outcome(strict.request(url, { method: 'GET' })), url).toBe('refused');
    expect(production.calls).toEqual([]);
  });

  it('says the same of an address it refuses and of a closed port it may reach: no port-scan oracle', async () => {
    const unusedPort = await new Promise<number>((resolve) => {
      const probe = http.createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const refusedAddress = await guard.request(`http://127.0.0.1:${P}/`, { method: 'GET' }).catch((e: unknown) => e);
    const closedPort = await allowing
      .request(`http://127.0.0.1:${unusedPort}/`, { method: 'GET' })
      .catch((e: unknown) => e);
    expect(refusedAddress).toBeInstanceOf(EgressError);
    expect(closedPort).toBeInstanceOf(EgressError);
    expect((closedPort as Error).message).toBe('refused');
    expect((refusedAddress as Error).message).toBe('refused');
    // The allowing guard does reach the inside server: the refusal above is the guard's.
    expect(await allowing.request(`http://127.0.0.1:${P}/reached`, { method: 'GET' })).toMatchObject({ status: 200 });
    expect(inside.hits).toEqual(['/reached']);
    inside.hits.length = 0;
  });

  it('resolves localhost with the system resolver and refuses what it answers', async () => {
    expect(await outcome(system.request(`http://localhost:${P}/secret`, { method: 'GET' }))).toBe('refused');
    expect(inside.hits).toEqual([]);
  });
});

// The outside world, played on 127.0.0.2.
const redirectTo = `http://127.0.0.1:${P}/secret`;
const outside = await serve(PUBLIC, (request, response) => {
  if (request.url === '/redirect') return response.writeHead(302, { location: redirectTo }).end();
  if (request.url === '/large') return response.end('x'.repeat(300 * 1024));
  if (request.url === '/declared-large')
    return response.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).write('x');
  if (request.url === '/endless') {
    const chunk = 'x'.repeat(64 * 1024);
    const more = () => {
      while (response.write(chunk));
      response.once('drain', more);
    };
    response.on('close', () => response.removeAllListeners('drain'));
    return more();
  }
  if (request.url === '/slow') return; // never answers
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
const echo = await serve(PUBLIC, (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () =>
    response
      .writeHead(201)
      .end(`${request.method} ${String(request.headers['x-tag'])} ${Buffer.concat(chunks).toString('utf8')}`),
  );
});
describe('what the guard lets through, it pins, bounds and does not redirect', () => {
  // 127.0.0.2 plays a public address: this guard allows it alone, and 127.0.0.1 stays refused.
  let answers = 0;
  const rebinding = resolverOf({
    'rebind.example': () => (++answers === 1 ? [PUBLIC] : ['127.0.0.1']),
    'api.example': [PUBLIC],
    'half.example': [PUBLIC, '127.0.0.1'],
  });
  const guard = createEgress({ allowHttp: true, allowAddresses: [`${PUBLIC}/32`], resolve: rebinding.resolve });
  afterAll(() => guard.close());
  const url = (host: string, path: string) => `http://${host}:${outside.port}${path}`;

  it('resolves a name once per request and connects to the address it checked: a rebinding resolver gains nothing', async () => {
    const first = await guard.request(url('rebind.example', '/first'), { method: 'GET' });
    expect(first).toEqual({ status: 200, text: '{"ok":true}' });
    expect(rebinding.calls.filter((name) => name === 'rebind.example')).toHaveLength(1);
    // The same name now answers the inside address: refused, and nothing reached it.
    expect(await outcome(guard.request(`http://rebind.example:${P}/second`, { method: 'GET' }))).toBe('refused');
    expect(rebinding.calls.filter((name) => name === 'rebind.example')).toHaveLength(2);
    // A name with one public and one inside address is refused whole.
    expect(await outcome(guard.request(url('half.example', '/'), { method: 'GET' }))).toBe('refused');
    expect(outside.hits).toEqual(['/first']);
    expect(inside.hits).toEqual([]);
  });

  it('answers a redirect as it is, never following it to the inside', async () => {
    expect(await guard.request(url('api.example', '/redirect'), { method: 'GET' })).toEqual({ status: 302, text: '' });
    expect(inside.hits).toEqual([]);
  });

  it('stops reading past the size cap, whether the answer declares its size, streams it or never ends', async () => {
    const small = { method: 'GET', maxResponseBytes: 256 * 1024 };
    for (const path of ['/large', '/declared-large', '/endless']) {
      const started = performance.now();
      expect(await outcome(guard.request(url('api.example', path), small)), path).toBe('too large');
      // Budget for the endless answer: the cap, not the sender, ends it (a loaded 2-CPU machine reads 256 KiB in ms).
      expect(performance.now() - started, path).toBeLessThan(2_000);
    }
    expect(
      await guard.request(url('api.example', '/large'), { method: 'GET', maxResponseBytes: 400 * 1024 }),
    ).toMatchObject({
      status: 200,
    });
  });

  it('gives up on an answer that does not come in time', async () => {
    expect(await outcome(guard.request(url('api.example', '/slow'), { method: 'GET', timeoutMs: 300 }))).toBe(
      'timed out',
    );
  });

  it('sends the method, headers and body it is given, and may skip the body of the answer', async () => {
    const target = `http://api.example:${echo.port}/echo`;
    expect(await guard.request(target, { method: 'PUT', headers: { 'x-tag': 't1' }, body: '{"a":1}' })).toEqual({
      status: 201,
      text: 'PUT t1 {"a":1}',
    });
    expect(await guard.request(target, { method: 'POST', body: 'x', readBody: false })).toEqual({
      status: 201,
      text: '',
    });
  });
});
