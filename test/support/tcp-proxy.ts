import net from 'node:net';
import { afterAll } from 'vitest';

/**
 * A loopback TCP proxy that can be cut and restored: a dependency going down, then coming back. While
 * cut, the proxy keeps its port and resets every connection at once: closing the port instead would let
 * another test file's server take it, and the restored "dependency" would then be a stranger that never
 * answers (seen in CI as connect timeouts long after the restore).
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    down = true;
    for (const socket of sockets) socket.destroy();
    return Promise.resolve();
  };
  afterAll(async () => {
    await cut();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    restore: () => {
      down = false;
      return Promise.resolve();
    },
  };
}
