import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { relayWelcomeGreeting } from '../../lib/conversation/script-walk';
import { messageText } from '../../lib/carriers/twilio/conversation-relay/frames';
import {
  createTurnQueue,
  frameBudget,
  joinUtterances,
  SOCKET_FRAME_LIMITS,
  type QueuedTurn,
} from '../../lib/carriers/twilio/conversation-relay/turn-queue';
import { configuredDialogueEngine } from '../../lib/conversation/create-engine';
import { tokensOf } from '../../lib/conversation/engine';
import { scriptGreeting } from '../../lib/conversation/script-engine';
import type { ScriptCall } from '../../lib/conversation/script-walk';
import { conversationKnowledge } from '../../lib/knowledge/knowledge-store';
import { log } from '../../lib/log';
import { poolSql, type RunSql } from '../../lib/run-sql';
import { MAX_MESSAGE_LENGTH, parseClientFrame, type ServerFrame } from '../../lib/test-sessions/frames';
import {
  TEST_SESSION_MAX_LENGTH_MS,
  type TestSessionEndReason,
  type TestSessionOutcome,
} from '../../lib/test-sessions/test-session-store';
import type { AppServices } from '../app-services';
import { coveredSessionMinutes } from '../../lib/credits/test-session-billing';
import { timeUpLine } from '../../lib/conversation/time-up';
import { claimSession, storeSessionTurns, touchSession, trimSessionTurn, type ClaimedSession } from './session-store';
import { endAndBillSession, sweepTestSessions } from './session-billing';
import { createSessionTools } from './session-tools';

/**
 * The socket of a web test session (docs/features/test-sessions.md): `GET /v1/test-sessions/{id}/socket` with
 * `Upgrade: websocket` on the API's HTTP server, the session's one-time token offered as a WebSocket subprotocol
 * (`Sec-WebSocket-Protocol: test-session.v1, <token>`: a browser cannot set Authorization on a WebSocket, and a
 * query string ends up in proxies' and servers' access logs; the server selects `test-session.v1`, never the token).
 * A handshake without the session's unspent, unexpired token is refused with 401 and the API's error body, and
 * nothing changes. The developer speaks as the lead by text; the dialogue engine answers token by token, with the
 * session's tools (which act on nothing real). The session ends once: the agent's last words, the client's `end`, a
 * dropped socket, the idle timeout, the maximum length or the API stopping; it is billed as it ends
 * (api/test-sessions/session-billing.ts).
 */
const SOCKET_PATH = /^\/v1\/test-sessions\/([^/?]+)\/socket(?:\?.*)?$/;

/** Whether an upgrade request is a test session's (the API's upgrade routes, api/http/upgrade-routes.ts). */
export const isTestSessionSocket = (url: string) => SOCKET_PATH.test(url);

/** The subprotocol the server selects; the client offers it with its token. */
export const TEST_SESSION_PROTOCOL = 'test-session.v1';

/** No frame from the client for this long ends the session (idle_timeout). */
export const TEST_SESSION_IDLE_MS = 2 * 60_000;

/** The largest frame the socket takes: a message is one utterance of at most 4000 characters. */
const MAX_FRAME_BYTES = 64 * 1024;

/** The session's last activity (TestSession.lastActivityAt, read by the sweep) is written at most this often. */
const TOUCH_EVERY_MS = 5_000;

type SessionTurnKind = 'start' | 'message' | 'interrupt' | 'end';
type SessionTurn = QueuedTurn<SessionTurnKind> & { text: string };

/** WebSocket close codes (RFC 6455). */
const NORMAL_CLOSURE = 1000;
const GOING_AWAY = 1001;

export interface TestSessionSocketOptions {
  idleMs?: number;
  maxLengthMs?: number;
  /** A billed minute's length when the hold's covered minutes are counted (default 60 s; tests shorten it). */
  minuteMs?: number;
  /** How often this process sweeps sessions nobody holds (sweepTestSessions); 0: never. */
  sweepEveryMs?: number;
}

/** How often every API process sweeps the sessions nobody holds any more. */
export const TEST_SESSION_SWEEP_EVERY_MS = 60_000;

/** A connected session silent this much longer than the idle timeout has lost its process. */
const ABANDONED_MARGIN_MS = 60_000;

function refuse(socket: Duplex, status: 401 | 500, error: string, detail: string) {
  const body = JSON.stringify({ error, detail });
  const reason = status === 401 ? 'Unauthorized' : 'Internal Server Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** The token among the offered subprotocols: the one that is not the protocol's name. */
function offeredToken(req: IncomingMessage): string {
  const offered = (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== '' && protocol !== TEST_SESSION_PROTOCOL);
  return offered[0] ?? '';
}

const scriptCallOf = (session: ClaimedSession): ScriptCall => ({
  agent: { ...session.agent, hints: session.agent.hints ?? [] },
  lead: { name: session.lead.name ?? null, fields: session.lead.fields ?? {} },
  disclosure: session.disclosure,
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One session on an open socket; answers its end (for the API's stop). */
function converse(
  ws: WebSocket,
  services: AppServices,
  session: ClaimedSession,
  options: { idleMs: number; maxLengthMs: number; minuteMs?: number },
) {
  const sql: RunSql = poolSql(services.sql);
  const send = (frame: ServerFrame) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  };
  const sendTool = (
    toolCall: { name: string; arguments: Record<string, unknown> },
    result: { ok: boolean; result: string },
  ) => send({ type: 'tool', name: toolCall.name, arguments: toolCall.arguments, result: result.result, ok: result.ok });
  const call = scriptCallOf(session);
  const engine = configuredDialogueEngine(
    {
      call,
      instructions: session.agent.instructions,
      firstMessage: session.agent.firstMessage,
      tools: createSessionTools({
        sql,
        sessionId: session.id,
        leadPhone: session.lead.phone ?? null,
        language: session.agent.language,
        transferNumber: session.agent.transferNumber,
        agentId: session.agent.id,
        onRun: (toolCall, result) => sendTool(toolCall, result),
        onFunction: ({ name, arguments: args }, result) =>
          sendTool({ name, arguments: isRecord(args) ? args : {} }, result),
      }),
      knowledge: conversationKnowledge(sql, session.agent),
      record: (turns) => storeSessionTurns(sql, session, turns),
      trim: (step, part, text) => trimSessionTurn(sql, session.id, { step, part, text }),
    },
    services.dialogue,
  );

  let ending: Promise<void> | null = null;
  let idle: NodeJS.Timeout | undefined;
  // The session's maximum length, or the minutes its hold covers if fewer: then the agent's closing line, and the end.
  const covered = session.heldCredits === null ? null : coveredSessionMinutes(session.heldCredits);
  const outOfMinutes = covered !== null && covered * 60_000 < options.maxLengthMs;
  const longest = setTimeout(
    () => {
      if (ending) return;
      if (outOfMinutes) {
        // Out of paid minutes, not out of length: the agent says so (a running reply is cut; `ending` stops it).
        for (const token of tokensOf(timeUpLine(session.agent.language))) send({ type: 'token', token });
        send({ type: 'turn_end' });
      }
      void end('max_length');
    },
    outOfMinutes ? covered * (options.minuteMs ?? 60_000) : options.maxLengthMs,
  );
  const stillIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => void end('idle_timeout'), options.idleMs);
  };
  stillIdle();

  /** Ends the session once: recorded, billed, told (`ended`) and closed. */
  function end(reason: TestSessionEndReason): Promise<void> {
    ending ??= (async () => {
      clearTimeout(idle);
      clearTimeout(longest);
      try {
        const ended = await endAndBillSession(services, session, { reason, finished: engine.ended });
        send({ type: 'ended', reason, outcome: (ended?.outcome ?? 'incomplete') as TestSessionOutcome });
      } catch (error) {
        log.error({ err: error, sessionId: session.id }, 'test session: ending failed; left to the sweep');
      }
      if (ws.readyState === ws.OPEN) ws.close(reason === 'api_stopping' ? GOING_AWAY : NORMAL_CLOSURE, reason);
    })();
    return ending;
  }

  const say = async (tokens: Iterable<string> | AsyncIterable<string>) => {
    for await (const token of tokens) if (!ending) send({ type: 'token', token });
    if (ending) return;
    send({ type: 'turn_end' });
    if (engine.ended) await end('agent_ended');
  };

  const failed = (error: unknown) => {
    log.error({ err: error, sessionId: session.id }, 'test session: the conversation failed; ending it');
    send({ type: 'error', error: 'internal_error', message: 'The conversation failed; the session ends.' });
    return end('agent_ended');
  };
  /**
   * One turn at a time, as a call's (docs/features/conversation/relay.md#one-turn-at-a-time): messages sent while the
   * agent answers wait as one utterance (joined, within the message cap; none is lost), the latest interruption and an
   * end wait beside it: never more than three waiting turns, whatever the client sends.
   */
  const messageTurn = (text: string): SessionTurn => ({
    kind: 'message',
    text,
    run: async () => (ending ? undefined : say(engine.onPrompt(text))),
  });
  const turns = createTurnQueue<SessionTurnKind, SessionTurn>({
    merge: (waiting, newer) =>
      waiting.kind === 'message' ? messageTurn(joinUtterances(waiting.text, newer.text, MAX_MESSAGE_LENGTH)) : newer,
    failed,
  });
  // The carrier's welcome greeting on a call (the disclosure, the opening line), then the engine's first words.
  turns.push({
    kind: 'start',
    text: '',
    async run() {
      const first = await engine.start();
      const words = [relayWelcomeGreeting(call, scriptGreeting(call)), first].filter((text) => text !== '').join(' ');
      await say(tokensOf(words));
    },
  });
  const budget = frameBudget(SOCKET_FRAME_LIMITS);
  let dropped = 0;
  /** The session's last activity, written at most once per TOUCH_EVERY_MS (not one UPDATE per frame). */
  let touchedAt = 0;
  const touch = () => {
    const now = Date.now();
    if (now - touchedAt < TOUCH_EVERY_MS) return;
    touchedAt = now;
    touchSession(sql, session.id).catch((error: unknown) =>
      log.warn({ err: error, sessionId: session.id }, 'test session: its activity was not recorded'),
    );
  };

  ws.on('message', (data, isBinary) => {
    if (ending) return;
    if (!budget.take()) {
      // Past the socket's frame rate: dropped unread, and said so; a client that keeps on is cut off.
      dropped += 1;
      send({ type: 'error', error: 'rate_limited', message: 'Too many frames: this one was dropped. Slow down.' });
      if (dropped >= SOCKET_FRAME_LIMITS.droppedBeforeClose) void end('client_ended');
      return;
    }
    stillIdle();
    touch();
    const parsed = isBinary
      ? ({ problem: 'binary frames are not taken: send JSON text frames' } as const)
      : parseClientFrame(messageText(data));
    if ('problem' in parsed) return send({ type: 'error', error: 'invalid_body', message: parsed.problem });
    const { frame } = parsed;
    switch (frame.type) {
      case 'message':
        return turns.push(messageTurn(frame.text));
      case 'interrupt':
        return turns.push({
          kind: 'interrupt',
          text: frame.heardUntil,
          run: async () => (ending ? undefined : engine.onInterrupt(frame.heardUntil)),
        });
      case 'end':
        return turns.push({ kind: 'end', text: '', run: () => end('client_ended') });
    }
  });
  ws.on('close', () => void end('client_dropped'));
  return { end };
}

/** Takes test sessions' handshakes from `upgrades`; close() ends every session (the API is stopping) and waits for it. */
export function attachTestSessionSockets(
  upgrades: Server,
  services: AppServices,
  options: TestSessionSocketOptions = {},
) {
  const settings = {
    idleMs: options.idleMs ?? TEST_SESSION_IDLE_MS,
    maxLengthMs: options.maxLengthMs ?? TEST_SESSION_MAX_LENGTH_MS,
    minuteMs: options.minuteMs,
  };
  const sweepEveryMs = options.sweepEveryMs ?? TEST_SESSION_SWEEP_EVERY_MS;
  const sweep =
    sweepEveryMs > 0
      ? setInterval(() => {
          sweepTestSessions(services, { silentForMs: settings.idleMs + ABANDONED_MARGIN_MS }).catch((error: unknown) =>
            log.error({ err: error }, 'test session sweep failed'),
          );
        }, sweepEveryMs).unref()
      : undefined;
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    handleProtocols: (protocols) => (protocols.has(TEST_SESSION_PROTOCOL) ? TEST_SESSION_PROTOCOL : false),
  });
  const live = new Set<{ end(reason: TestSessionEndReason): Promise<void> }>();

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const path = SOCKET_PATH.exec(req.url ?? '');
    const sessionId = path ? decodeURIComponent(path[1]!) : '';
    const session = await claimSession(poolSql(services.sql), sessionId, offeredToken(req));
    if (!session)
      return refuse(
        socket,
        401,
        'unauthorized',
        `no valid token for this session: offer the token POST /v1/test-sessions answered, once and before it expires, as a WebSocket subprotocol beside ${TEST_SESSION_PROTOCOL}`,
      );
    sockets.handleUpgrade(req, socket, head, (ws) => {
      const conversation = converse(ws, services, session, settings);
      live.add(conversation);
      ws.on('close', () => live.delete(conversation));
    });
  }

  upgrades.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((error: unknown) => {
      log.error({ err: error }, 'test session: a handshake failed');
      refuse(socket, 500, 'internal_error', 'the handshake failed');
    });
  });
  return {
    /** Ends every live session as api_stopping (recorded and billed), then closes the sockets. */
    async close() {
      clearInterval(sweep);
      await Promise.all([...live].map((conversation) => conversation.end('api_stopping')));
      for (const ws of sockets.clients) ws.terminate();
      sockets.close();
    },
  };
}
