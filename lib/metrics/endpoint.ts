import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { log } from '../log';

export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves GET /metrics (Prometheus text format) of `registry` on a port of its own, apart from the API's:
 * it needs no key, and is reached by the scraper only (docs/operations.md#processes-and-ports). A port already taken is
 * logged as an error and the process goes on without its metrics: they are not worth an outage.
 */
export async function serveMetrics(
  registry: Registry,
  { host, port, name }: { host: string; port: number; name: string },
): Promise<MetricsEndpoint | null> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => {
        log.error({ err: error, endpoint: name }, 'metrics collection failed');
        res.writeHead(500).end();
      },
    );
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (error) => {
      log.error({ err: error, endpoint: name, host, port }, 'metrics endpoint not started');
      resolve(false);
    });
    server.listen(port, host, () => resolve(true));
  });
  if (!listening) return null;
  const bound = (server.address() as AddressInfo).port;
  log.info({ endpoint: name, url: `http://${host}:${bound}/metrics` }, 'metrics endpoint listening');
  return { port: bound, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
