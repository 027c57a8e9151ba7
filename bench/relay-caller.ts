// The bench's side of a ConversationRelay socket (bench/conversation-latency.ts): it plays Twilio, as the Twilio twin
// does (simulators/twilio-twin/relay.ts), but unpaced: it opens the call's socket signed as Twilio signs it
// (X-Twilio-Signature over the ws:// URL, no form), sends `setup`, and then says what it is told when it is told, timing
// each turn from its `prompt` (last: true) to the first `text` token the API answers.
import WebSocket from 'ws';
import { TWILIO_TWIN_AUTH_TOKEN } from '../lib/carriers/twin';
import { twilioRelayUrl } from '../lib/carriers/twilio/twilio-urls';
import { messageText } from '../lib/carriers/twilio/conversation-relay/frames';
import { TWILIO_SIGNATURE_HEADER, twilioSignature } from '../simulators/twilio-twin/signature';

/** A dialing call of an agent, placed through a Twilio connection: what its socket and setup name. */
export interface RelayBenchCall {
  attemptId: string;
  callSid: string;
  from: string;
  to: string;
}

/** One turn of the agent: from the prompt sent to its first token, and to its last (`last: true`). */
export interface RelayTurn {
  firstTokenMs: number;
  lastTokenMs: number;
  /** The agent's words, joined. */
  words: string;
}

export interface RelayBenchConversation {
  /** Sends `setup` and resolves with the agent's first turn (the first question, after the welcome greeting). */
  setup(): Promise<RelayTurn>;
  /** Says `text` as one prompt with `last: true` and resolves with the agent's answer. */
  say(text: string): Promise<RelayTurn>;
  /** Resolves when the API has sent `end`. */
  readonly ended: Promise<void>;
  readonly isEnded: boolean;
  close(): Promise<void>;
}

/** No answer within this long is a failed turn (the API is stuck, not slow). */
const TURN_TIMEOUT_MS = 30_000;

/** Opens the call's relay socket on the API at `apiUrl`, as Twilio would; resolves once the handshake is accepted. */
export function openRelayConversation(
  apiUrl: string,
  connectionId: string,
  call: RelayBenchCall,
): Promise<RelayBenchConversation> {
  const url = twilioRelayUrl(apiUrl, { connectionId, attemptId: call.attemptId });
  const ws = new WebSocket(url, {
    headers: { [TWILIO_SIGNATURE_HEADER]: twilioSignature(TWILIO_TWIN_AUTH_TOKEN, url), 'User-Agent': 'Twilio' },
    perMessageDeflate: false,
  });
  let waiting: {
    sentAt: number;
    firstAt: number | null;
    words: string[];
    resolve: (turn: RelayTurn) => void;
    reject: (error: Error) => void;
    timer: NodeJS.Timeout;
  } | null = null;
  let isEnded = false;
  let endedNow: () => void = () => {};
  const ended = new Promise<void>((resolve) => (endedNow = resolve));
  const fail = (error: Error) => {
    if (!waiting) return;
    clearTimeout(waiting.timer);
    waiting.reject(error);
    waiting = null;
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const at = performance.now();
    const frame = JSON.parse(messageText(data as Buffer)) as { type: string; token?: string; last?: boolean };
    if (frame.type === 'end') {
      isEnded = true;
      endedNow();
      return;
    }
    if (frame.type !== 'text' || !waiting) return;
    waiting.firstAt ??= at;
    if (frame.token) waiting.words.push(frame.token);
    if (!frame.last) return;
    const { sentAt, firstAt, words, resolve, timer } = waiting;
    clearTimeout(timer);
    waiting = null;
    resolve({ firstTokenMs: firstAt - sentAt, lastTokenMs: at - sentAt, words: words.join('') });
  });
  ws.on('close', (code) => fail(new Error(`the relay socket closed (${code}) during a turn`)));

  const turn = (frame: Record<string, unknown>) =>
    new Promise<RelayTurn>((resolve, reject) => {
      if (waiting) return reject(new Error('a turn is already waiting for its answer'));
      if (ws.readyState !== WebSocket.OPEN) return reject(new Error('the relay socket is not open'));
      const timer = setTimeout(() => fail(new Error(`no answer within ${TURN_TIMEOUT_MS} ms`)), TURN_TIMEOUT_MS);
      waiting = { sentAt: performance.now(), firstAt: null, words: [], resolve, reject, timer };
      ws.send(JSON.stringify(frame));
    });

  const conversation: RelayBenchConversation = {
    setup: () =>
      turn({
        type: 'setup',
        sessionId: `VX${call.callSid.slice(2)}`,
        callSid: call.callSid,
        from: call.from,
        to: call.to,
        direction: 'outbound-api',
        customParameters: { attemptId: call.attemptId },
      }),
    say: (text) => turn({ type: 'prompt', voicePrompt: text, lang: 'en-US', last: true }),
    ended,
    get isEnded() {
      return isEnded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once('close', () => resolve());
        ws.close();
      }),
  };

  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(conversation));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`relay handshake refused: ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
