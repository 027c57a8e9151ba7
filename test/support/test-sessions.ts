import { expect } from 'vitest';
import WebSocket from 'ws';
import { TEST_SESSION_PROTOCOL } from '../../api/test-sessions/session-socket';
import { messageText } from '../../lib/carriers/twilio/conversation-relay/frames';
import { serverFrameSchema, type ServerFrame } from '../../lib/test-sessions/frames';

/** A client of the socket: every frame it hears, checked against the protocol, in order. */
export interface TestSessionClient {
  ws: WebSocket;
  next(): Promise<ServerFrame>;
  /** The agent's words up to turn_end, and the frames heard on the way. */
  turn(): Promise<{ words: string; frames: ServerFrame[] }>;
  send(frame: unknown): void;
  closed: Promise<number>;
}

export function connectTestSession(url: string, token: string): Promise<TestSessionClient> {
  const ws = new WebSocket(url, [TEST_SESSION_PROTOCOL, token]);
  const heard: ServerFrame[] = [];
  const waiting: Array<(frame: ServerFrame) => void> = [];
  ws.on('message', (data) => {
    const frame = serverFrameSchema.parse(JSON.parse(messageText(data)));
    const waiter = waiting.shift();
    if (waiter) waiter(frame);
    else heard.push(frame);
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const next = () =>
    heard.length ? Promise.resolve(heard.shift()!) : new Promise<ServerFrame>((resolve) => waiting.push(resolve));
  const client: TestSessionClient = {
    ws,
    next,
    async turn() {
      const frames: ServerFrame[] = [];
      let words = '';
      for (;;) {
        const frame = await next();
        if (frame.type === 'turn_end') return { words: words.trim(), frames };
        if (frame.type === 'token') words += frame.token;
        else frames.push(frame);
      }
    },
    send: (frame) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    closed,
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      expect(ws.protocol).toBe(TEST_SESSION_PROTOCOL);
      resolve(client);
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
