import http from 'node:http';

/**
 * A lean HTTP client for load: node:http over kept-alive sockets. fetch (undici) spends several times
 * the CPU per request, and on a two-core machine the load generator's CPU is taken from the server it
 * measures.
 */
export function createJsonPoster(baseUrl: string, headers: Record<string, string>, sockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const post = (pathname: string, body: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const request = http.request(
        `${baseUrl}${pathname}`,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': payload.length },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  return { post, close: () => agent.destroy() };
}
