import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { leadFieldsSchema } from '../../lib/campaigns/lead-fields';
import { transcriptTurnSchema } from '../../lib/calls/transcript';
import { ErrorCode } from '../../lib/error-codes';
import { e164PhoneSchema } from '../../lib/phone';
import { Refusal } from '../../lib/refusal';
import { MAX_MESSAGE_LENGTH } from '../../lib/test-sessions/frames';
import { TEST_SESSION_END_REASONS, TEST_SESSION_OUTCOMES } from '../../lib/test-sessions/test-session-store';
import { defineRoute } from '../http/route';
import { TEST_SESSION_PROTOCOL } from './session-socket';
import { createTestSession, getTestSession, MAX_OPEN_TEST_SESSIONS, TEST_SESSION_TOKEN_TTL_MS } from './test-sessions';

const tags = ['Test sessions'];
const params = z.object({ id: z.string() });

const createBodySchema = z.strictObject({
  agentId: z
    .string()
    .describe('A live agent of the workspace (GET /agents): it holds the conversation, with its script and tools.'),
  lead: z
    .strictObject({
      name: z.string().check(atMostCodePoints(200)).optional().describe('How the agent addresses the lead ({{name}}).'),
      phone: e164PhoneSchema
        .optional()
        .describe("The lead's number (E.164): schedule_callback reads times in its time zone (none: UTC)."),
      fields: leadFieldsSchema
        .default({})
        .describe("The lead's fields the agent's script reads, as a pushed lead's fields."),
    })
    .optional()
    .describe('Who the agent believes it talks to; default: no name, no phone, no fields.'),
});

const createdSchema = z.object({
  id: z.string().uuid().describe('The session: GET /v1/test-sessions/{id} reads it and its transcript.'),
  url: z.string().describe('The socket to open (ws:// or wss://): GET /v1/test-sessions/{id}/socket.'),
  token: z
    .string()
    .describe(
      `The one-time token that opens the socket, offered as a WebSocket subprotocol beside ${TEST_SESSION_PROTOCOL}. Shown once: only its hash is stored.`,
    ),
  expiresAt: z.string().datetime().describe('The token opens the socket until then, once.'),
});

const sessionSchema = z.object({
  id: z.string().uuid(),
  agentId: z.string().uuid(),
  lead: z.object({
    name: z.string().nullable(),
    phone: z.string().nullable(),
    fields: z.record(z.string(), z.unknown()),
  }),
  status: z
    .enum(['waiting', 'live', 'ended'])
    .describe('waiting: the socket has not opened; live: it is open; ended: the session is over.'),
  createdAt: z.string().datetime(),
  expiresAt: z.string().datetime().describe("The token's expiry."),
  connectedAt: z.string().datetime().nullable().describe('The socket opened: the start of the billed time.'),
  endedAt: z.string().datetime().nullable(),
  endReason: z.enum(TEST_SESSION_END_REASONS).nullable(),
  outcome: z
    .enum(TEST_SESSION_OUTCOMES)
    .nullable()
    .describe("What the session came to (null until it ends): a tool's outcome, completed, or incomplete."),
  durationMs: z
    .number()
    .int()
    .nullable()
    .describe('connectedAt to endedAt: billed per started minute as a test call. Null: never connected.'),
  transcript: z
    .array(transcriptTurnSchema.omit({ confidence: true }))
    .describe("The turns, in order, redacted by the workspace's compliance rules."),
});

const PROTOCOL_DESCRIPTION = [
  'A WebSocket (RFC 6455), which OpenAPI cannot describe: this operation is its handshake, `GET` with `Upgrade: websocket`.',
  `Authentication: the session's one-time token from POST /v1/test-sessions, offered as a subprotocol: \`Sec-WebSocket-Protocol: ${TEST_SESSION_PROTOCOL}, <token>\` (in a browser: \`new WebSocket(url, ['${TEST_SESSION_PROTOCOL}', token])\`). A browser cannot set Authorization on a WebSocket, and a token in the query string would be written to access logs. The server selects ${TEST_SESSION_PROTOCOL}, never echoing the token. No API key is read.`,
  `A handshake without the session's token, with a token already spent or expired (${TEST_SESSION_TOKEN_TTL_MS / 60_000} minutes), or for another session is refused 401 { error: unauthorized } and nothing changes. Asked without Upgrade: websocket, 426 upgrade_required.`,
  'Frames: one JSON object per text frame.',
  `Client to server: { type: "message", text } (what the lead says, 1 to ${MAX_MESSAGE_LENGTH} characters); { type: "interrupt", heardUntil } (optional: the lead spoke over the agent, who had said heardUntil of its answer); { type: "end" }.`,
  'Server to client: { type: "token", token } (the agent\'s words, streamed); { type: "turn_end" } (the agent is done: the client may speak); { type: "tool", name, arguments, result, ok } (a tool ran: end_call, opt_out, schedule_callback or transfer_to_human; in a test session they act on nothing: no number is listed, no attempt booked, no transfer dialed); { type: "ended", reason, outcome } (then the socket closes); { type: "error", error, message } (a frame the server could not take, in the error vocabulary: invalid_body; the session goes on).',
  "The agent speaks first (its opening line and first question) on its own. The session ends when the agent has said its last words (agent_ended), on the client's end (client_ended), when the socket drops (client_dropped), after 2 minutes without a client frame (idle_timeout), at 15 minutes (max_length) or when the API stops (api_stopping).",
].join('\n\n');

export const testSessionRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/test-sessions',
    access: { permission: 'calls.test' },
    summary:
      'Start a web test session: talk to an agent by text over a WebSocket, through the dialogue engine and tools a call uses (docs/features/test-sessions.md). 201 with the socket URL and a one-time token valid for 5 minutes (shown once). ' +
      'Billed as a test call, per started minute from the socket opening to the end, at most 15 minutes: credits are held now (one minute at least, up to 15 as the balance allows) and charged when the session ends; a token never used is charged nothing. A balance short of one minute: 402 insufficient_credits, nothing recorded. ' +
      'An agent that is not a live agent of the workspace: 400 invalid_body at agentId, as POST /calls/test. ' +
      `At most ${MAX_OPEN_TEST_SESSIONS} sessions of a workspace open at once (waiting for their socket or live): one more is 429 rate_limited with Retry-After, nothing recorded.`,
    tags,
    body: createBodySchema,
    responses: { 201: { description: 'The session, its socket and its token.', schema: createdSchema } },
    errors: { 402: [ErrorCode.insufficient_credits], 429: [ErrorCode.rate_limited] },
    handler: async ({ services, principal, body, req }) => ({
      status: 201,
      body: await createTestSession(
        services,
        principal,
        body,
        services.publicBaseUrl ?? `${req.protocol}://${req.get('host')}`,
      ),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/test-sessions/{id}',
    access: { permission: 'calls.test' },
    summary:
      "One web test session of the workspace with its transcript, its start, end and outcome. An unknown id and another workspace's session are the same 403.",
    tags,
    params,
    responses: { 200: { description: 'The session.', schema: sessionSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getTestSession(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/test-sessions/{id}/socket',
    access: { public: true },
    summary: `The session's WebSocket. ${PROTOCOL_DESCRIPTION}`,
    tags,
    params,
    responses: { 101: { description: 'Switching Protocols: the socket is open (Upgrade: websocket only).' } },
    errors: { 426: [ErrorCode.upgrade_required] },
    handler: async () => {
      // A handshake never reaches the routes (the HTTP server's upgrade event takes it: session-socket.ts).
      throw new Refusal(ErrorCode.upgrade_required, {
        detail: `open it as a WebSocket, offering ${TEST_SESSION_PROTOCOL} and the session's token as subprotocols`,
      });
    },
  }),
];
