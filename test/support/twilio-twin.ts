import http from 'node:http';
import { afterAll, expect } from 'vitest';
import twilio from 'twilio';
import Ajv from 'ajv';
import type { Database } from '../../lib/database';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { twilioClientAt } from '../../lib/carriers/twilio-base-url';
import { createTwilioTwin, type TwilioTwinOptions } from '../../simulators/twilio-twin/server';
import { TWILIO_TWIN_TABLES, type TwilioTwinCall } from '../../simulators/twilio-twin/call-store';
import { carrierDescription, type OperationRef } from './carrier-openapi';
import { listenOnLoopback } from './http-receiver';
import { until } from './until';

/** An API key of the development account, for the tests of API-key authentication. */
export const TWIN_API_KEY = { sid: 'SK0123456789abcdef0123456789abcdef', secret: 'twin-api-key-secret' };

/**
 * The Twilio twin as the tests run it: in process, on a free loopback port, over the test file's database, closed at
 * the end of the file; callbacks retried quickly. `client` is the official SDK pointed at it.
 */
export async function startTestTwilioTwin(db: Database, options: Partial<TwilioTwinOptions> & { port?: number } = {}) {
  const twin = createTwilioTwin({
    sql: db.sql,
    accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN, apiKeys: [TWIN_API_KEY] }],
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
  const client = twilioClientAt(baseUrl, { accountSid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN });
  return { twin, baseUrl, client, close };
}

export interface ProductRequest {
  method: string;
  /** The full URL the twin called (what it signed). */
  url: string;
  path: string;
  params: Record<string, string>;
  signature: string | undefined;
  headers: http.IncomingHttpHeaders;
  /** Whether the twilio SDK's validateRequest accepts the signature, with the account's auth token. */
  valid: boolean;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/**
 * A stand-in for the product's side of the protocol: records every callback and TwiML request the twin makes, and
 * answers TwiML from `routes` (by path; a function of the request's parameters). Unknown paths answer 204 (a callback).
 */
export async function startProductStandIn() {
  const received: ProductRequest[] = [];
  const routes = new Map<string, (request: ProductRequest) => string | { status: number; body?: string }>();
  let baseUrl = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = `${baseUrl}${req.url}`;
      const parsed = new URL(url);
      const body = Buffer.concat(chunks).toString('utf8');
      const params = Object.fromEntries(req.method === 'GET' ? parsed.searchParams : new URLSearchParams(body));
      const signature = req.headers['x-twilio-signature'] as string | undefined;
      const request: ProductRequest = {
        method: req.method ?? '',
        url,
        path: parsed.pathname,
        params,
        signature,
        headers: req.headers,
        valid: twilio.validateRequest(TWILIO_TWIN_AUTH_TOKEN, signature ?? '', url, req.method === 'GET' ? {} : params),
        at: Date.now(),
      };
      received.push(request);
      const route = routes.get(parsed.pathname);
      const answer = route ? route(request) : { status: 204 };
      if (typeof answer === 'string') res.writeHead(200, { 'content-type': 'text/xml' }).end(answer);
      else res.writeHead(answer.status, { 'content-type': 'text/xml' }).end(answer.body ?? '');
    });
  });
  baseUrl = `http://127.0.0.1:${await listenOnLoopback(server)}`;
  const at = (path: string) => received.filter((request) => request.path === path);
  return { baseUrl, received, routes, at };
}

export const twiml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

/** What the twin's control route says was said on a call. */
export async function twinLog(baseUrl: string, sid: string) {
  const response = await fetch(`${baseUrl}/control/calls/${sid}/log`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    answeredBy: string | null;
    durationSec: number | null;
    log: {
      atMs: number;
      speaker: string;
      kind: string;
      text?: string;
      confidence?: number;
      voice?: string;
      language?: string;
    }[];
  };
}

export async function scriptPersona(baseUrl: string, script: Record<string, unknown>) {
  const response = await fetch(`${baseUrl}/control/personas`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(script),
  });
  expect(response.status).toBe(200);
}

/** Waits until the call has ended on the twin (through the SDK's fetch) and answers it. */
export async function ended(client: twilio.Twilio, sid: string, timeoutMs = 20_000) {
  return until(
    () => client.calls(sid).fetch(),
    (call) => ['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(call.status),
    timeoutMs,
  );
}

/**
 * The twin's answer to a raw request, checked against Twilio's description: a 2xx by the operation's response, an
 * error by the error body Twilio's description publishes (its only one: the 408 of UpdateCallRecording, below), since
 * the description declares no error response for these operations.
 */
export async function conformingAnswer(
  baseUrl: string,
  operation: OperationRef,
  init: { path: string; method: string; body?: string; auth?: string | null },
) {
  const auth = init.auth === undefined ? `${TWILIO_TWIN_ACCOUNT_SID}:${TWILIO_TWIN_AUTH_TOKEN}` : init.auth;
  const response = await fetch(`${baseUrl}${init.path}`, {
    method: init.method,
    headers: {
      ...(auth && { authorization: `Basic ${Buffer.from(auth).toString('base64')}` }),
      ...(init.body !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    body: init.body,
  });
  const body = (await response.json()) as Record<string, unknown>;
  const contentType = response.headers.get('content-type') ?? undefined;
  if (response.status < 300)
    expect(
      carrierDescription('twilio').responseProblems(operation, { status: response.status, contentType, body }),
    ).toEqual([]);
  else expect(twilioErrorProblems(body)).toEqual([]);
  return { status: response.status, body };
}

/**
 * Twilio's error body as its description of the 2010-04-01 API publishes it: `paths./2010-04-01/Accounts/{AccountSid}/
 * Calls/{CallSid}/Recordings/{Sid}.json.post.responses.408` of twilio/twilio-oai's spec/json/twilio_api_v2010.json at
 * the vendored commit (vendor/openapi/twilio/README.md), the only error schema it has; all four members required
 * here, as Twilio always sends them.
 */
const TWILIO_ERROR_SCHEMA = {
  type: 'object',
  properties: {
    code: { type: 'integer', format: 'int32' },
    message: { type: 'string' },
    more_info: { type: 'string' },
    status: { type: 'integer', format: 'int32' },
  },
  required: ['code', 'message', 'more_info', 'status'],
  additionalProperties: false,
};
const validateError = new Ajv({ allErrors: true, strictSchema: false, validateFormats: false }).compile(
  TWILIO_ERROR_SCHEMA,
);
export function twilioErrorProblems(body: unknown): string[] {
  return validateError(body)
    ? []
    : (validateError.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

/**
 * The twin's own record (simulators/twilio-twin/call-store.ts: its schema `twilio_twin`, not the product's), as the
 * tests read it: a call by sid, the calls a condition holds for (on the calls' columns, $1… its values), their count,
 * and the callbacks still owed for the calls from a number.
 */
export const twilioTwinRecord = (db: Pick<Database, 'sql'>) => ({
  async call(sid: string): Promise<TwilioTwinCall> {
    const [row] = await db.sql<TwilioTwinCall>(`SELECT * FROM ${TWILIO_TWIN_TABLES.calls} WHERE sid = $1`, sid);
    if (!row) throw new Error(`the Twilio twin holds no call ${sid}`);
    return row;
  },
  calls: (condition: string, ...values: unknown[]) =>
    db.sql<TwilioTwinCall>(`SELECT * FROM ${TWILIO_TWIN_TABLES.calls} WHERE ${condition}`, ...values),
  async count(condition: string, ...values: unknown[]): Promise<number> {
    const [row] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${TWILIO_TWIN_TABLES.calls} WHERE ${condition}`,
      ...values,
    );
    return row!.count;
  },
  async callbacksOwedFrom(from: string): Promise<number> {
    const [row] = await db.sql<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${TWILIO_TWIN_TABLES.callbacks} b
         JOIN ${TWILIO_TWIN_TABLES.calls} c ON c.sid = b."callSid" WHERE b."deliveredAt" IS NULL AND c."from" = $1`,
      from,
    );
    return row!.count;
  },
});
