import http from 'node:http';
import { afterAll, expect } from 'vitest';
import Telnyx from 'telnyx';
import type { Database } from '../../lib/database';
import { TELNYX_TWIN_API_KEY, TELNYX_TWIN_CONNECTION_ID, TELNYX_TWIN_PUBLIC_KEY } from '../../lib/carriers/twin';
import { DEVELOPMENT_TELNYX_ACCOUNT } from '../../simulators/telnyx-twin/config';
import { createTelnyxTwin, type TelnyxTwinOptions } from '../../simulators/telnyx-twin/server';
import { TELNYX_TWIN_TABLES, type TelnyxTwinCall } from '../../simulators/telnyx-twin/call-store';
import { carrierDescription, type OperationRef } from './carrier-openapi';
import { listenOnLoopback } from './http-receiver';
import type { RecordedExchange } from './recording-proxy';
import { until } from './until';

export { TELNYX_TWIN_CONNECTION_ID };

/** What the SDK sent and the twin answered, for the conformance checks. */
export interface SdkExchange {
  method: string;
  url: string;
  requestBody: string | undefined;
  status: number;
  contentType: string | undefined;
  responseBody: unknown;
}

/** The operation of the vendored description a request of the twin's REST API is. */
export function operationOf(method: string, url: string): OperationRef {
  const path = new URL(url).pathname.replace(/^\/v2/, '');
  if (path === '/calls') return { method: method.toLowerCase(), path: '/calls' };
  if (path === '/phone_numbers') return { method: 'get', path: '/phone_numbers' };
  if (/^\/phone_numbers\/[^/]+$/.test(path)) return { method: method.toLowerCase(), path: '/phone_numbers/{id}' };
  if (/^\/call_control_applications\/[^/]+$/.test(path))
    return { method: method.toLowerCase(), path: '/call_control_applications/{id}' };
  if (path === '/recordings') return { method: 'get', path: '/recordings' };
  if (/^\/recordings\/[^/]+$/.test(path)) return { method: method.toLowerCase(), path: '/recordings/{recording_id}' };
  const action = /^\/calls\/[^/]+\/actions\/([a-z_]+)$/.exec(path);
  if (action) return { method: 'post', path: `/calls/{call_control_id}/actions/${action[1]}` };
  return { method: method.toLowerCase(), path: '/calls/{call_control_id}' };
}

/**
 * The Telnyx twin as the tests run it: in process, on a free loopback port, over the test file's database, closed at
 * the end of the file; webhooks retried quickly. `client` is the official SDK at its base URL (retries off), whose
 * every request and answer is kept in `exchanges`.
 */
export async function startTestTelnyxTwin(db: Database, options: Partial<TelnyxTwinOptions> & { port?: number } = {}) {
  const twin = createTelnyxTwin({
    sql: db.sql,
    accounts: [DEVELOPMENT_TELNYX_ACCOUNT, OTHER_ACCOUNT],
    timeScale: 0.002,
    retry: { firstMs: 20, maxMs: 200 },
    ...options,
  });
  const baseUrl = await twin.listen(options.port ?? 0);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await twin.close();
  };
  afterAll(close);
  const exchanges: SdkExchange[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const text = await response.clone().text();
    exchanges.push({
      method: init?.method ?? 'GET',
      url: input instanceof Request ? input.url : input instanceof URL ? input.href : input,
      requestBody: typeof init?.body === 'string' ? init.body : undefined,
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      responseBody: text ? JSON.parse(text) : undefined,
    });
    return response;
  };
  const clientWith = (apiKey: string) =>
    new Telnyx({ apiKey, baseURL: baseUrl, maxRetries: 0, publicKey: TELNYX_TWIN_PUBLIC_KEY, fetch: recordingFetch });
  return { twin, baseUrl, client: clientWith(TELNYX_TWIN_API_KEY), clientWith, exchanges, close };
}

/** A second account of the twin: its key must not reach the first account's calls. */
export const OTHER_ACCOUNT = {
  id: 'other',
  apiKeys: ['KEYother_account_not_a_secret'],
  connections: [{ id: '1700000000000000099' }],
  signingKey: Buffer.alloc(32, 7).toString('base64'),
};

/** Every request the SDK sent and every answer the twin gave, checked against the vendored description. */
export function exchangeProblems(exchanges: readonly SdkExchange[]): string[] {
  const telnyx = carrierDescription('telnyx');
  return exchanges.flatMap((exchange) => {
    const operation = operationOf(exchange.method, exchange.url);
    const where = `${exchange.method} ${new URL(exchange.url).pathname}`;
    return [
      ...telnyx
        .requestProblems(operation, {
          url: exchange.url,
          contentType: 'application/json',
          body: exchange.requestBody === undefined ? undefined : JSON.parse(exchange.requestBody),
        })
        .map((problem) => `${where} request: ${problem}`),
      ...telnyx
        .responseProblems(operation, {
          status: exchange.status,
          contentType: exchange.contentType,
          body: exchange.responseBody,
        })
        .map((problem) => `${where} ${exchange.status}: ${problem}`),
    ];
  });
}

/** The key of an event in the description's `webhooks`: call.speak.ended is callSpeakEnded; call.transcription is transcription. */
export const webhookKey = (eventType: string) =>
  eventType === 'call.transcription'
    ? 'transcription'
    : eventType.replace(/[._]([a-z])/g, (_match, letter: string) => letter.toUpperCase());

export interface ReceivedWebhook {
  body: string;
  headers: Record<string, string>;
  eventType: string;
  id: string;
  payload: Record<string, any>;
  /** Whether the telnyx SDK's webhooks.unwrap verified the signature with the development public key. */
  verified: boolean;
  /** What the vendored description finds wrong with it (headers and body). */
  problems: string[];
  at: number;
}

/**
 * A stand-in for the product's webhook endpoint: records every webhook, verified by the telnyx SDK and checked against
 * the description. `refuse` makes it answer 503 (the twin delivers again).
 */
export async function startWebhookReceiver() {
  const verifier = new Telnyx({ apiKey: 'KEY_not_used', publicKey: TELNYX_TWIN_PUBLIC_KEY, maxRetries: 0 });
  const received: ReceivedWebhook[] = [];
  const control = { refuse: false };
  let baseUrl = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
        );
        let verified = false;
        try {
          await verifier.webhooks.unwrap(body, { headers });
          verified = true;
        } catch {
          verified = false;
        }
        const event = JSON.parse(body) as { data: { event_type: string; id: string; payload: Record<string, any> } };
        received.push({
          body,
          headers,
          eventType: event.data.event_type,
          id: event.data.id,
          payload: event.data.payload,
          verified,
          problems: carrierDescription('telnyx').webhookProblems(webhookKey(event.data.event_type), { headers, body }),
          at: Date.now(),
        });
        res.writeHead(control.refuse ? 503 : 200).end();
      })();
    });
  });
  baseUrl = `http://127.0.0.1:${await listenOnLoopback(server)}`;
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  /** The webhooks of one call, the first copy of each (by its id), in the order they arrived. */
  const of = (callControlId: string) => {
    const seen = new Set<string>();
    return received.filter(
      (webhook) =>
        webhook.payload.call_control_id === callControlId &&
        !seen.has(webhook.id) &&
        seen.add(webhook.id) !== undefined,
    );
  };
  return { url: (path = '/webhooks') => `${baseUrl}${path}`, received, of, control };
}

/** Waits until the call's call.hangup webhook arrived; answers its webhooks. */
export async function untilHungUp(
  receiver: Awaited<ReturnType<typeof startWebhookReceiver>>,
  callControlId: string,
  timeoutMs = 20_000,
) {
  return until(
    async () => receiver.of(callControlId),
    (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.hangup'),
    timeoutMs,
  );
}

/** What the twin's control route says was said on a call. */
export async function telnyxTwinLog(baseUrl: string, callControlId: string) {
  const origin = new URL(baseUrl).origin;
  const response = await fetch(`${origin}/control/calls/${encodeURIComponent(callControlId)}/log`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    hangupCause: string | null;
    amdResult: string | null;
    durationSec: number | null;
    log: { atMs: number; speaker: string; kind: string; text?: string; confidence?: number; voice?: string }[];
  };
}

export async function scriptTelnyxPersona(baseUrl: string, script: Record<string, unknown>) {
  const response = await fetch(`${new URL(baseUrl).origin}/control/personas`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(script),
  });
  expect(response.status).toBe(200);
}

export const clientState = (text: string) => Buffer.from(text).toString('base64');

/**
 * The twin's own record (simulators/telnyx-twin/call-store.ts: its schema `telnyx_twin`, not the product's), as the
 * tests read it: a call by call_control_id, the calls a condition holds for (on the calls' columns, $1… its values),
 * their count, and the webhooks still owed for the calls from a number.
 */
export const telnyxTwinRecord = (db: Pick<Database, 'sql'>) => ({
  async call(callControlId: string): Promise<TelnyxTwinCall> {
    const [row] = await db.sql<TelnyxTwinCall>(
      `SELECT * FROM ${TELNYX_TWIN_TABLES.calls} WHERE "callControlId" = $1`,
      callControlId,
    );
    if (!row) throw new Error(`the Telnyx twin holds no call ${callControlId}`);
    return row;
  },
  calls: (condition: string, ...values: unknown[]) =>
    db.sql<TelnyxTwinCall>(`SELECT * FROM ${TELNYX_TWIN_TABLES.calls} WHERE ${condition}`, ...values),
  async count(condition: string, ...values: unknown[]): Promise<number> {
    const [row] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${TELNYX_TWIN_TABLES.calls} WHERE ${condition}`,
      ...values,
    );
    return row!.count;
  },
  async webhooksOwedFrom(from: string): Promise<number> {
    const [row] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${TELNYX_TWIN_TABLES.webhooks} w
         JOIN ${TELNYX_TWIN_TABLES.calls} c USING ("callControlId") WHERE w."deliveredAt" IS NULL AND c."from" = $1`,
      from,
    );
    return row!.count;
  },
});

/**
 * The Call Control requests a recording proxy in front of the twin saw for a call: each as its action
 * ("conversation_relay_start", "hangup"...; else the method) and its JSON body.
 */
export const callControlCommands = (exchanges: readonly RecordedExchange[], callControlId: string) =>
  exchanges
    .filter(
      (exchange) => exchange.url.includes(encodeURIComponent(callControlId)) || exchange.url.includes(callControlId),
    )
    .map((exchange) => ({
      action: /\/actions\/([a-z_]+)$/.exec(exchange.url)?.[1] ?? exchange.method,
      body: exchange.body ? (JSON.parse(exchange.body) as Record<string, unknown>) : undefined,
    }));
