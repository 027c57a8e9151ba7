import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

/** Starts an express app on port (0: a free one) and host; answers the server and its base URL once listening. */
export async function listenHttp(app: Express, port: number, host: string): Promise<{ server: Server; url: string }> {
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}

/** Closes a server now: its kept-alive connections are cut rather than waited for. */
export async function closeHttp(server: Server | undefined): Promise<void> {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}
