import { createJsonHttp } from '../lib/http/json-http';

/**
 * The load generators' client (lib/http/json-http.ts: node:http over kept-alive sockets): fetch spends
 * several times the CPU per request, and on a two-core machine the load generator's CPU is taken from
 * the server it measures.
 */
export function createJsonPoster(baseUrl: string, headers: Record<string, string>, sockets: number) {
  const client = createJsonHttp({ sockets });
  return {
    post: (pathname: string, body: unknown) => client.request('POST', `${baseUrl}${pathname}`, { body, headers }),
    close: client.close,
  };
}
