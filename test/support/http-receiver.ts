import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A real HTTP receiver on loopback; `answer` gives the status of the n-th request (1-based), and optionally its JSON body. */
export async function startReceiver(
  answer: (n: number, request: ReceivedRequest) => number | { status: number; json: unknown },
) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const reply = answer(received.length, request);
      if (typeof reply === 'number') res.writeHead(reply).end();
      else res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
    });
  });
  return { url: `http://127.0.0.1:${await listenOnLoopback(server)}/hooks`, received };
}

/** Listens on a free loopback port until the test file ends (its connections closed then); answers the port. */
export async function listenOnLoopback(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}
