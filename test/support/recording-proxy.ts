import http from 'node:http';
import { listenOnLoopback } from './http-receiver';

export interface RecordedExchange {
  method: string;
  /** The path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
  responseContentType: string | null;
  responseBody: string;
}

/**
 * A real HTTP proxy on loopback that forwards every request to `target` as it came and records the exchange: what a
 * client (the twilio SDK) really sent over the wire, and what it was answered, for the conformance checks against a
 * carrier's published description. Closed at the end of the test file. `target` may be given late (a function, read
 * at each request: a server whose own address is the proxy's). `refuse` answers a request it names with that status
 * instead of forwarding it (the server behind down for that request), recorded too.
 */
export async function startRecordingProxy(
  target: string | (() => string),
  refuse?: (request: { method: string; url: string; body: string }) => number | null,
) {
  const exchanges: RecordedExchange[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const upstream = new URL(typeof target === 'string' ? target : target());
      const refused = refuse?.({ method: req.method ?? '', url: req.url ?? '', body: body.toString('utf8') }) ?? null;
      if (refused !== null) {
        exchanges.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: body.toString('utf8'),
          status: refused,
          responseContentType: null,
          responseBody: '',
        });
        res.writeHead(refused).end();
        return;
      }
      const forwarded = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          const answered: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answered.push(chunk));
          answer.on('end', () => {
            const responseBody = Buffer.concat(answered);
            exchanges.push({
              method: req.method ?? '',
              url: req.url ?? '',
              headers: req.headers,
              body: body.toString('utf8'),
              status: answer.statusCode ?? 0,
              responseContentType: answer.headers['content-type'] ?? null,
              responseBody: responseBody.toString('utf8'),
            });
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(responseBody);
          });
        },
      );
      forwarded.on('error', () => res.destroy());
      forwarded.end(body);
    });
  });
  const port = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}`, port, exchanges };
}
