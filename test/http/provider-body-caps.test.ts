import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { telnyxClientOf } from '../../lib/carriers/telnyx/telnyx-client';
import { createOpenAiCompatibleChat } from '../../lib/chat/openai-compatible';
import { ChatProviderError } from '../../lib/chat/provider';
import { readCustomersPage } from '../../lib/crm/shopify-admin';
import { cappedFetch, isBodyCapError } from '../../lib/http/capped-fetch';
import { createJsonHttp } from '../../lib/http/json-http';
import { openAiClient } from '../../lib/openai-client';
import { GoogleSheetsError, GoogleSpreadsheetProvider } from '../../lib/sheets/google-provider';
import { parseServiceAccountKey } from '../../lib/sheets/service-account-key';
import { createGraphWhatsAppClient } from '../../lib/whatsapp/graph-client';

/*
 * Every provider client's body cap (lib/http/capped-fetch.ts, docs/configuration.md#body-size-caps), against a local
 * server whose answers under /endless go on far past every cap: each client fails with the cap error (EBODYCAP),
 * and the server could write no more than the cap and the sockets' buffers before the client hung up, so the client
 * held no more than that. Under /declared an answer's Content-Length says a terabyte: refused at its headers. Under
 * /normal each client's ordinary answer still works.
 */

const MiB = 1024 * 1024;
/** What the kernel's and the streams' buffers hold between the server's writes and the client's reads, at most. */
const BUFFERED_SLACK_BYTES = 32 * MiB;

/** An endless answer the server is writing: its bytes written so far, and whether its socket closed. */
interface Endless {
  path: string;
  written: number;
  closed: boolean;
}
const endless: Endless[] = [];

/** A server-sent event of a chat completion's stream carrying `text`. */
const eventOf = (text: string) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
  })}\n\n`;

/**
 * Where an "endless" answer does end after all: far past every cap and the buffers' slack, so that a client without its
 * cap reads it whole and its test fails on the answer, instead of filling the test process's memory until a timeout.
 */
const ENDLESS_ENDS_AT_BYTES = 48 * MiB;

/** Writes `chunk` again and again, with back-pressure, until the client hangs up (or ENDLESS_ENDS_AT_BYTES). */
function writeForever(request: http.IncomingMessage, response: http.ServerResponse, chunk: Buffer) {
  const record: Endless = { path: request.url ?? '', written: 0, closed: false };
  endless.push(record);
  response.on('close', () => {
    record.closed = true;
    response.destroy();
  });
  const more = () => {
    if (response.destroyed) return;
    if (record.written >= ENDLESS_ENDS_AT_BYTES) return void response.end();
    record.written += chunk.length;
    if (response.write(chunk)) setImmediate(more);
    else response.once('drain', more);
  };
  more();
}

/** The open streaming answer of the streaming test: it ends when released. */
let releaseStream: () => void = () => undefined;

function normalAnswer(request: http.IncomingMessage, response: http.ServerResponse, path: string) {
  const json = (body: unknown) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (path.startsWith('/v2/calls/')) return json({ data: { call_control_id: 'v3:call', is_alive: false } });
  if (path === '/v1/chat/completions') {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (!(JSON.parse(body) as { stream?: boolean }).stream)
        return json({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
        });
      // A stream whose first event is sent at once and whose end waits for the test: proof that it is not buffered.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(eventOf('hel'));
      releaseStream = () => response.end(`${eventOf('lo')}data: [DONE]\n\n`);
    });
    return;
  }
  if (path.endsWith('/graphql.json'))
    return json({ data: { customers: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } } } });
  if (path === '/token') return json({ access_token: 't', expires_in: 3600, token_type: 'Bearer' });
  if (path.startsWith('/v4/spreadsheets/'))
    return json({
      sheets: [{ properties: { sheetId: 0, title: 'Leads', gridProperties: { rowCount: 1000, columnCount: 26 } } }],
    });
  if (path.startsWith('/v23.0/')) return json({ status: 'APPROVED', quality_score: { score: 'GREEN' } });
  response.writeHead(404).end();
}

const server = http.createServer((request, response) => {
  const url = request.url ?? '/';
  if (url.startsWith('/endless-events/')) {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    return writeForever(request, response, Buffer.from(eventOf('a'.repeat(1000)).repeat(16)));
  }
  if (url.startsWith('/endless/') && url.includes('/token')) return normalAnswer(request, response, '/token');
  // The Sheets client drops its root URL's path: its endless spreadsheet is told by its id.
  if (url.startsWith('/endless/') || url.startsWith('/v4/spreadsheets/endless')) {
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' });
    return writeForever(request, response, Buffer.alloc(64 * 1024, 'a'));
  }
  if (url.startsWith('/declared/')) {
    request.resume();
    // A terabyte announced, a few bytes sent, and the socket kept open: only the header can have refused it.
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1024 ** 4) });
    response.write('{"a":');
    return;
  }
  if (url.startsWith('/v4/spreadsheets/')) return normalAnswer(request, response, url.split('?')[0]!);
  if (url.startsWith('/normal/')) return normalAnswer(request, response, url.slice('/normal'.length).split('?')[0]!);
  response.writeHead(404).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

/** The error a call failed with (or a failure if it did not fail). */
const failureOf = (call: Promise<unknown>) =>
  call.then(
    () => new Error('the call succeeded'),
    (error: unknown) => error,
  );

/** Waits, with a bound, for the server to see the endless answer to `path` closed; answers the bytes it wrote. */
async function writtenUntilClosed(path: string): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const record = endless.findLast((candidate) => candidate.path.startsWith(path));
    if (record?.closed) return record.written;
    if (Date.now() > deadline)
      throw new Error(`the endless answer to ${path} was ${record ? 'never closed by the client' : 'never asked for'}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The failure is the cap's (itself or its cause), names the cap, and the client stopped reading near the cap. */
async function expectCapped(failure: unknown, path: string, capBytes: number) {
  expect(isBodyCapError(failure) || String((failure as Error).message).includes(`exceeds ${capBytes} bytes`)).toBe(
    true,
  );
  expect(String((failure as Error).message)).toMatch(new RegExp(`exceeds ${capBytes} bytes`));
  const written = await writtenUntilClosed(path);
  expect(written).toBeGreaterThan(capBytes);
  expect(written).toBeLessThan(capBytes + BUFFERED_SLACK_BYTES);
}

const telnyxAt = (baseUrl: string) =>
  telnyxClientOf({ baseUrl, secrets: { apiKey: 'KEY', publicKey: 'cHVibGlj' } } as unknown as TelnyxConnection);

const shopifyAt = (baseUrl: string) =>
  readCustomersPage(
    {
      connectionId: 'c1',
      shopDomain: 'caps.myshopify.com',
      provider: 'shopify-twin',
      baseUrl,
      accessToken: 'shpat_x',
    },
    null,
  );

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const sheetsAt = (base: string) =>
  new GoogleSpreadsheetProvider({
    name: 'google-twin',
    key: parseServiceAccountKey(
      JSON.stringify({
        type: 'service_account',
        project_id: 'caps',
        private_key_id: 'k1',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: 'writer@caps.iam.gserviceaccount.com',
        token_uri: `${base}/token`,
      }),
    ),
    rootUrl: `${base}/`,
    limiter: { reserve: () => Promise.resolve(0) },
  });

const noFacts = {
  kpis: () => Promise.resolve({}),
  timing: () => Promise.resolve({}),
  outcomes: () => Promise.resolve({}),
  intelligence: () => Promise.resolve({}),
  orders: () => Promise.resolve({}),
} as unknown as Parameters<ReturnType<typeof createOpenAiCompatibleChat>['answer']>[0]['facts'];

const chatAt = (baseUrl: string) =>
  createOpenAiCompatibleChat({ baseUrl, model: 'm', timeoutMs: 30_000 }).answer({
    question: 'how many?',
    history: [],
    facts: noFacts,
    signal: new AbortController().signal,
  });

describe('the capped fetch', () => {
  const capped = cappedFetch(256 * 1024);

  it('cuts an endless answer once past the cap, and refuses a declared length over it at the headers', async () => {
    const response = await capped(`${origin}/endless/fetch`);
    await expectCapped(await failureOf(response.text()), '/endless/fetch', 256 * 1024);
    const declared = await failureOf(capped(`${origin}/declared/fetch`));
    expect(declared).toMatchObject({ code: 'EBODYCAP' });
    expect((declared as Error).message).toBe(`the answer from ${new URL(origin).host} exceeds 262144 bytes`);
  });

  it('passes a normal answer through, its status, headers and URL kept', async () => {
    const response = await capped(`${origin}/normal/v23.0/t1`);
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${origin}/normal/v23.0/t1`);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ status: 'APPROVED', quality_score: { score: 'GREEN' } });
    expect((await capped(`${origin}/nowhere`)).status).toBe(404);
  });
});

describe("json-http's maxResponseBytes", () => {
  const client = createJsonHttp({ sockets: 2, maxResponseBytes: 256 * 1024 });
  afterAll(() => client.close());

  it('destroys the socket of an endless answer or of a declared length past the cap; a normal answer is read', async () => {
    await expectCapped(await failureOf(client.request('GET', `${origin}/endless/json`)), '/endless/json', 256 * 1024);
    expect(await failureOf(client.request('GET', `${origin}/declared/json`))).toMatchObject({ code: 'EBODYCAP' });
    expect(await client.request('GET', `${origin}/normal/v23.0/t1`)).toMatchObject({ status: 200 });
  });
});

describe("each provider client's cap", () => {
  it('Telnyx (1 MiB)', async () => {
    const failure = await failureOf(telnyxAt(`${origin}/endless/v2`).calls.retrieveStatus('v3:call'));
    await expectCapped(failure, '/endless/v2/calls', MiB);
    expect(isBodyCapError(await failureOf(telnyxAt(`${origin}/declared/v2`).calls.retrieveStatus('v3:call')))).toBe(
      true,
    );
    const { data } = await telnyxAt(`${origin}/normal/v2`).calls.retrieveStatus('v3:call');
    expect(data).toMatchObject({ call_control_id: 'v3:call' });
  });

  it('the openai SDK (4 MiB), its streamed answers capped in total and still streamed', async () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const endlessModel = openAiClient({ baseURL: `${origin}/endless/v1`, timeoutMs: 30_000 });
    await expectCapped(
      await failureOf(endlessModel.chat.completions.create({ model: 'm', messages })),
      '/endless/v1',
      4 * MiB,
    );
    const endlessStream = openAiClient({ baseURL: `${origin}/endless-events/v1`, timeoutMs: 30_000 });
    let streamed = 0;
    const failure = await failureOf(
      (async () => {
        for await (const event of await endlessStream.chat.completions.create({ model: 'm', messages, stream: true }))
          streamed += event.choices[0]?.delta.content?.length ?? 0;
      })(),
    );
    await expectCapped(failure, '/endless-events/v1', 4 * MiB);
    // The events before the cap were handed on as they came.
    expect(streamed).toBeGreaterThan(1_000_000);

    const model = openAiClient({ baseURL: `${origin}/normal/v1`, timeoutMs: 30_000 });
    const answer = await model.chat.completions.create({ model: 'm', messages });
    expect(answer.choices[0]?.message.content).toBe('hello');
    const stream = await model.chat.completions.create({ model: 'm', messages, stream: true });
    const events = stream[Symbol.asyncIterator]();
    // The first event arrives while the server holds the rest back: nothing waits for the whole answer.
    expect((await events.next()).value).toMatchObject({ choices: [{ delta: { content: 'hel' } }] });
    releaseStream();
    expect((await events.next()).value).toMatchObject({ choices: [{ delta: { content: 'lo' } }] });
    expect((await events.next()).done).toBe(true);
  });

  it("the campaign chat's OpenAI-compatible model (4 MiB, streamed)", async () => {
    const failure = await failureOf(
      (async () => {
        for await (const text of chatAt(`${origin}/endless-events/v1`)) expect(text).toMatch(/^a+$/);
      })(),
    );
    expect(failure).toBeInstanceOf(ChatProviderError);
    expect((failure as Error).message).toBe('the chat model broke off its answer');
    const written = await writtenUntilClosed('/endless-events/v1/chat');
    expect(written).toBeLessThan(4 * MiB + BUFFERED_SLACK_BYTES);

    const fragments: string[] = [];
    const answering = (async () => {
      for await (const text of chatAt(`${origin}/normal/v1`)) {
        fragments.push(text);
        if (fragments.length === 1) releaseStream();
      }
    })();
    await answering;
    expect(fragments).toEqual(['hel', 'lo']);
  });

  it('the Shopify Admin client (8 MiB)', async () => {
    const failure = await failureOf(shopifyAt(`${origin}/endless`));
    expect((failure as Error).message).toMatch(/exceeds 8388608 bytes/);
    const written = await writtenUntilClosed('/endless/admin');
    expect(written).toBeGreaterThan(8 * MiB);
    expect(written).toBeLessThan(8 * MiB + BUFFERED_SLACK_BYTES);
    expect((await failureOf(shopifyAt(`${origin}/declared`))) as Error).toMatchObject({
      message: expect.stringMatching(/exceeds 8388608 bytes/) as unknown,
    });
    expect(await shopifyAt(`${origin}/normal`)).toMatchObject({ kind: 'page', customers: [], hasNextPage: false });
  });

  it('Google Sheets (1 MiB), its failure retryable like any answer that did not come', async () => {
    const failure = await failureOf(
      sheetsAt(`${origin}/endless`).create({ key: 'endless-sheet', title: 't', tab: 'Leads' }),
    );
    expect(failure).toBeInstanceOf(GoogleSheetsError);
    expect(failure).toMatchObject({ retryable: true, status: 0 });
    expect((failure as Error).message).toMatch(/^Google Sheets did not answer: .*exceeds 1048576 bytes/);
    const written = await writtenUntilClosed('/v4/spreadsheets/endless-sheet');
    expect(written).toBeGreaterThan(MiB);
    expect(written).toBeLessThan(MiB + BUFFERED_SLACK_BYTES);
    expect(await sheetsAt(`${origin}/normal`).create({ key: 's1', title: 't', tab: 'Leads' })).toEqual({
      spreadsheetId: 's1',
    });
  });

  it("WhatsApp's Graph client (1 MiB)", async () => {
    const endlessGraph = createGraphWhatsAppClient({ baseUrl: `${origin}/endless` });
    const declaredGraph = createGraphWhatsAppClient({ baseUrl: `${origin}/declared` });
    const graph = createGraphWhatsAppClient({ baseUrl: `${origin}/normal` });
    try {
      await expectCapped(await failureOf(endlessGraph.getTemplate('t1')), '/endless/v23.0', MiB);
      expect(await failureOf(declaredGraph.getTemplate('t1'))).toMatchObject({ code: 'EBODYCAP' });
      expect(await graph.getTemplate('t1')).toEqual({
        status: 'APPROVED',
        rejectedReason: null,
        qualityRating: 'GREEN',
      });
    } finally {
      for (const client of [endlessGraph, declaredGraph, graph]) client.close();
    }
  });
});
