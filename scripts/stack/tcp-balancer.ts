import net from 'node:net';

/**
 * One port in front of several processes of the same service (start:cluster's two API processes): each new
 * connection goes to the next upstream in turn; an upstream that refuses is skipped for that connection.
 */
export async function startTcpBalancer(
  listen: { host: string; port: number },
  upstreamPorts: number[],
): Promise<{ stop(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const connect = (client: net.Socket, tries: number) => {
    const port = upstreamPorts[next++ % upstreamPorts.length]!;
    const upstream = net.connect(port, '127.0.0.1');
    track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => {
      upstream.destroy();
      if (!connected && tries > 1) connect(client, tries - 1);
      else client.destroy();
    });
  };
  const server = net.createServer((client) => {
    track(client);
    client.on('error', () => client.destroy());
    connect(client, upstreamPorts.length);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
