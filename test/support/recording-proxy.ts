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
 * carrier's published description. Closed at the end of the test file.
 */
export async function startRecordingProxy(target: string) {
  const exchanges: RecordedExchange[] = [];
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
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
