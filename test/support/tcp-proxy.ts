import net from 'node:net';
import { atTestEnd } from './processes';

/**
 * A loopback TCP proxy that can be cut and restored: a dependency going down, then coming back. While
 * cut, the proxy keeps its port and resets every connection at once: closing the port instead would let
 * another test file's server take it, and the restored "dependency" would then be a stranger that never
 * answers (seen in CI as connect timeouts long after the restore). Black-holed, it answers nothing at all:
 * every connection, open or new, is held and never written to, as across a network partition. Closed when
 * the test that started it finishes (at the end of the file when started outside a test).
 */
export async function startTcpProxy(
  /** Where connections go; a function when the target starts after the proxy (a server given the proxy's address). */
  target: { host: string; port: number } | (() => { host: string; port: number }),
) {
  const sockets = new Set<net.Socket>();
  let state: 'up' | 'down' | 'black-holed' | 'answers-dropped' = 'up';
  const hold = (socket: net.Socket) => {
    socket.unpipe();
    socket.pause();
    socket.removeAllListeners('data');
  };
  const server = net.createServer((client) => {
    if (state === 'down') {
      client.resetAndDestroy();
      return;
    }
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (state === 'black-holed') {
      hold(client);
      return;
    }
    const { host, port } = typeof target === 'function' ? target() : target;
    const upstream = net.connect(port, host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => upstream.destroy());
    if (state === 'answers-dropped') {
      // The request reaches the server whole; its first byte of answer resets the client instead.
      client.pipe(upstream);
      upstream.once('data', () => client.resetAndDestroy());
      return;
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    state = 'down';
    for (const socket of sockets) socket.destroy();
    return Promise.resolve();
  };
  atTestEnd(async () => {
    await cut();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    /** Nothing goes through any more, and nothing is closed either. */
    blackHole: () => {
      state = 'black-holed';
      for (const socket of sockets) hold(socket);
      return Promise.resolve();
    },
    /**
     * Requests still reach the server, and every answer is lost: the client's connection is reset at the answer's
     * first byte, after the server has done what it was asked (a dial whose answer never came back). Connections
     * open before are closed, so that every request from now on takes this path.
     */
    dropAnswers: () => {
      state = 'answers-dropped';
      for (const socket of sockets) socket.destroy();
      return Promise.resolve();
    },
    restore: () => {
      state = 'up';
      return Promise.resolve();
    },
  };
}
