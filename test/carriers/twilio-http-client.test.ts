import http from 'node:http';
import type net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { BaseUrlRequestClient, TWILIO_BODY_CAP_BYTES } from '../../lib/carriers/twilio-base-url';

/*
 * The Twilio SDK's HTTP client (lib/carriers/twilio-base-url.ts) against a Twilio that misbehaves: one that never
 * answers fails within the request timeout, and one whose answer has no end is cut at the body cap, its memory bounded.
 */

let answered = 0;
const server = http.createServer((request, response) => {
  answered++;
  if (request.url?.includes('/Hung')) return; // Never a byte back.
  // Far past the cap, but with an end: a client without its cap reads it whole and its test fails on the answer.
  if (request.url?.includes('/Long')) return void response.end(Buffer.alloc(4 * 1024 * 1024, 'a'));
  response.writeHead(200, { 'Content-Type': 'application/json' });
  // An endless answer: a chunk every tick until the client hangs up.
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const more = () => {
    if (response.destroyed) return;
    if (response.write(chunk)) setImmediate(more);
    else response.once('drain', more);
  };
  response.on('close', () => response.destroy());
  more();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const get = (client: BaseUrlRequestClient, path: string) =>
  client
    .request({ method: 'get', uri: `https://api.twilio.com/2010-04-01/Accounts/AC0/${path}` })
    .catch((error: unknown) => error);

describe("the Twilio client's HTTP", () => {
  it('fails a request Twilio never answers within its timeout', async () => {
    const started = Date.now();
    const failed = await get(new BaseUrlRequestClient(baseUrl, { timeout: 300 }), 'Hung.json');
    // The budget: the 300 ms timeout and a generous margin for a loaded machine.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(failed).toMatchObject({ code: 'ETIMEDOUT' });
    expect(answered).toBeGreaterThan(0);
  });

  it('cuts an answer past the body cap (1 MiB by default) instead of reading it all', async () => {
    expect(TWILIO_BODY_CAP_BYTES).toBe(1024 * 1024);
    const failed = await get(new BaseUrlRequestClient(baseUrl, { bodyCapBytes: 256 * 1024 }), 'Calls.json');
    expect(failed).toMatchObject({ code: 'EBODYCAP' });
    expect((failed as Error).message).toMatch(/exceeds 262144 bytes/);
    const capped = await get(new BaseUrlRequestClient(baseUrl), 'Calls.json');
    expect(capped).toMatchObject({ code: 'EBODYCAP' });
  });

  it("caps the SDK's own client as well (it sends when HTTP_PROXY or TWILIO_CA_BUNDLE is set)", async () => {
    const client = new BaseUrlRequestClient(baseUrl, { bodyCapBytes: 256 * 1024 });
    const failed = await client.axios
      .get(`${baseUrl}/2010-04-01/Accounts/AC0/Long.json`)
      .catch((error: unknown) => error);
    expect((failed as Error).message).toMatch(/maxContentLength size of 262144 exceeded/);
  });
});
