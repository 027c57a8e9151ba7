import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createJsonHttp } from '../lib/http/json-http';

// lib/http/json-http.ts: the hot path's JSON client (the worker's dials of the simulated carrier) and its deadline.
const servers: Server[] = [];
async function serve(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler).listen(0, '127.0.0.1');
  servers.push(server);
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const http = createJsonHttp({ sockets: 4 });
afterAll(() => {
  http.close();
  for (const server of servers) server.closeAllConnections();
  for (const server of servers) server.close();
});

describe('the JSON client', () => {
  it('answers the status and body of an answer within its deadline', async () => {
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    expect(await http.request('POST', `${url}/calls`, { body: { a: 1 }, timeoutMs: 5_000 })).toEqual({
      status: 201,
      text: '{"ok":true}',
    });
  });

  it('fails a request that has no whole answer within timeoutMs, headers sent or not', async () => {
    const silent = await serve(() => {});
    await expect(http.request('POST', `${silent}/calls`, { body: {}, timeoutMs: 100 })).rejects.toThrow(
      /no answer within 100 ms/,
    );
    const halfway = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    await expect(http.request('GET', `${halfway}/calls`, { timeoutMs: 100 })).rejects.toThrow();
  });
});
