import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The API's WebSocket endpoints share its HTTP server's `upgrade` event, and each refuses what it does not know (the
 * ConversationRelay socket answers any other path 404). So the server's upgrades are routed by path, once: each
 * endpoint is attached to a server of its own that never listens and only hears its own handshakes; `rest` hears
 * every upgrade no route takes.
 */
export function routeUpgrades(server: Server) {
  const routes: Array<{ takes: (url: string) => boolean; upgrades: Server }> = [];
  const rest = createServer();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const route = routes.find(({ takes }) => takes(req.url ?? ''));
    (route?.upgrades ?? rest).emit('upgrade', req, socket, head);
  });
  return {
    /** A server hearing the upgrades whose URL `takes` accepts (before any route added later). */
    route(takes: (url: string) => boolean): Server {
      const upgrades = createServer();
      routes.push({ takes, upgrades });
      return upgrades;
    },
    rest,
  };
}
