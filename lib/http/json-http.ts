import http from 'node:http';
import https from 'node:https';
import { bodyCapError, declaredOverCap } from './capped-fetch';

export interface JsonHttpResponse {
  status: number;
  text: string;
}

export interface JsonHttpRequest {
  /** Sent as JSON (content-type application/json); none: no body. */
  body?: unknown;
  /** A body already serialised (what was signed must be what is sent). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** The body's media type; default application/json (a form-encoded webhook: application/x-www-form-urlencoded). */
  contentType?: string;
  signal?: AbortSignal;
  /**
   * The request fails (the socket destroyed) when no whole answer came within this many ms. A plain timer, cleared
   * with the answer: AbortSignal.timeout's signal, its listeners on the request and its socket cost a dial of the
   * worker's hot path several times as much (docs/benchmarks/bare-ladder.md).
   */
  timeoutMs?: number;
}

/**
 * A lean JSON client over node:http(s) with kept-alive sockets, for the hot paths between our own
 * processes (the worker dialing the simulated carrier, the carrier POSTing its events) and for load
 * generators: fetch (undici) spends several times the CPU per request, which on a small machine is
 * taken from the servers it talks to. Answers the status and the body's text; never throws on a status.
 */
export function createJsonHttp({
  sockets,
  idleMs,
  maxResponseBytes,
}: {
  sockets: number;
  /** Idle sockets closed after this long (default: kept). */ idleMs?: number;
  /**
   * The most of an answer's body read (default: no cap, for our own processes): past it, or when its Content-Length
   * says more, the socket is destroyed and the request fails with `EBODYCAP` (lib/http/capped-fetch.ts). A provider's
   * client sets it, so that an endless answer cannot fill the process's memory.
   */
  maxResponseBytes?: number;
}) {
  const idle = idleMs === undefined ? {} : { timeout: idleMs };
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: sockets, ...idle }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: sockets, ...idle }),
  };
  const send = (method: string, url: string, options: JsonHttpRequest = {}) =>
    new Promise<JsonHttpResponse>((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      if (!secure && target.protocol !== 'http:') throw new Error(`not an http(s) URL: ${url}`);
      const text = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      const payload = text === undefined ? undefined : Buffer.from(text);
      const request = (secure ? https : http).request(
        target,
        {
          method,
          agent: agents[target.protocol as 'http:' | 'https:'],
          signal: options.signal,
          headers: {
            ...options.headers,
            ...(payload && {
              'content-type': options.contentType ?? 'application/json',
              'content-length': payload.length,
            }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let bytes = 0;
          const capped = () => request.destroy(bodyCapError(target.host, maxResponseBytes!));
          if (maxResponseBytes !== undefined && declaredOverCap(response.headers['content-length'], maxResponseBytes))
            return capped();
          response.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (maxResponseBytes !== undefined && bytes > maxResponseBytes) return capped();
            chunks.push(chunk);
          });
          response.on('end', () => {
            clearTimeout(deadline);
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
          response.on('error', fail);
        },
      );
      const fail = (error: Error) => {
        clearTimeout(deadline);
        reject(error);
      };
      const deadline =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(
              () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms: ${method} ${url}`)),
              options.timeoutMs,
            );
      request.on('error', fail);
      request.end(payload);
    });
  return {
    request: send,
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

export type JsonHttp = ReturnType<typeof createJsonHttp>;
