import WebSocket from 'ws';
import { TWIN_TIMES, speakingMs } from './plan';
import type { SpeechAnswer } from './persona';

/**
 * A twin as ConversationRelay's caller side (docs/features/conversation/relay.md#the-twin), the Twilio twin's and the
 * Telnyx twin's (both carriers speak the same frames): it opens the call's socket with the carrier's headers (Twilio's
 * X-Twilio-Signature; Telnyx signs nothing, its URL carries the product's token), sends `setup`, then after each turn of
 * the agent's (`text` tokens up to `last: true`) says the persona's next answer as one `prompt` with `last: true`,
 * once the agent's words would have been spoken. The session ends when the application sends `end`, or closes.
 */
/**
 * ConversationRelay's `setup` message as Twilio documents it
 * (https://www.twilio.com/docs/voice/conversationrelay/websocket-messages#setup-message): sent once, right after the
 * socket opens. The twin's own reading of the page, not the product's schema (lib/carriers/twilio/conversation-relay/frames.ts), so
 * that a product misreading a field meets what Twilio sends. Telnyx sends the same message with ids of its own
 * (callControlId, callSessionId, callLegId), hence the open index.
 */
export interface SetupMessage {
  type: 'setup';
  sessionId: string;
  callSid: string;
  accountSid?: string;
  parentCallSid?: string;
  from: string;
  to: string;
  forwardedFrom?: string;
  callerName?: string;
  direction: string;
  callType?: string;
  callStatus?: string;
  customParameters: Record<string, string>;
  [field: string]: unknown;
}

/**
 * The application's messages the caller side acts on, as Twilio documents them: `text` (a token of the agent's words;
 * `last: true` ends its turn) and `end` (the session is over; handoffData, a string, goes to the <Connect> action).
 * play, sendDigits and language change nothing the twin's caller hears in words, so they are read and let pass.
 */
interface ApplicationMessage {
  type?: string;
  token?: string;
  last?: boolean;
  handoffData?: unknown;
}

/** A WebSocket message's text: each ConversationRelay message is one JSON text frame. */
function frameText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}

export interface RelaySettings {
  url: string;
  welcomeGreeting: string | null;
  language: string;
  voice: string | null;
  hints: string[];
  parameters: Record<string, string>;
}

export interface RelayLine {
  /** Simulated ms from the dial. */
  atMs: number;
  speaker: 'agent' | 'callee';
  text: string;
  confidence?: number;
}

export interface RelayOutcome {
  lines: RelayLine[];
  /** When the session ended, simulated ms from the dial. */
  endedAtMs: number;
  /**
   * end: the application sent `end`; closed: it closed the socket without one; dropped: the twin cut the socket
   * (the persona's relayDropsAt); hungup: the caller hung up (the persona's relayHangsUpAt); refused: the handshake
   * was not accepted (Twilio's error 64102).
   */
  how: 'end' | 'closed' | 'dropped' | 'hungup' | 'refused';
  /** The handshake's HTTP status when refused. */
  status?: number;
  /** The session's id, as its setup said. */
  sessionId: string;
  /** The `end` message's handoffData, when it gave one. */
  handoffData?: string;
}

export interface RelayCaller {
  settings: RelaySettings;
  /** The handshake's headers, as the carrier sends them. */
  headers: Record<string, string>;
  /** The session's id, in the carrier's format. */
  sessionId: string;
  setup: Omit<SetupMessage, 'type' | 'sessionId' | 'customParameters'>;
  /** The persona's answer to the agent's `index`-th turn (0-based), or null: silent (no prompt is sent). */
  answer: (index: number, said: string) => SpeechAnswer | null;
  /** Cut the socket, instead of answering, at the agent's turn of this index. */
  dropsAt: number | null;
  /** Speak over the agent's turn of this index, halfway through it (`interrupt`, then the answer). */
  interruptsAt?: number | null;
  /** Hang up, instead of answering, at the agent's turn of this index. */
  hangsUpAt?: number | null;
  atMs: number;
  timeScale: number;
  signal: AbortSignal;
}

export function relayConversation(caller: RelayCaller): Promise<RelayOutcome> {
  const { settings, timeScale } = caller;
  const lines: RelayLine[] = [];
  let at = caller.atMs;
  if (settings.welcomeGreeting) {
    lines.push({ atMs: at, speaker: 'agent', text: settings.welcomeGreeting });
    at += speakingMs(settings.welcomeGreeting);
  }
  return new Promise((resolve) => {
    const ws = new WebSocket(settings.url, { headers: caller.headers });
    let tokens = '';
    let turns = 0;
    let answering: NodeJS.Timeout | null = null;
    let done = false;
    const sessionId = caller.sessionId;
    let handoffData: string | undefined;
    const finish = (how: RelayOutcome['how'], status?: number) => {
      if (done) return;
      done = true;
      if (answering) clearTimeout(answering);
      caller.signal.removeEventListener('abort', abort);
      resolve({
        lines,
        endedAtMs: at,
        how,
        sessionId,
        ...(status !== undefined && { status }),
        ...(handoffData !== undefined && { handoffData }),
      });
    };
    const abort = () => {
      ws.terminate();
      finish('closed');
    };
    caller.signal.addEventListener('abort', abort);
    ws.on('unexpected-response', (_req, res) => {
      finish('refused', res.statusCode);
      ws.terminate();
    });
    ws.on('error', () => finish('refused'));
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          type: 'setup',
          sessionId,
          ...caller.setup,
          customParameters: settings.parameters,
        }),
      ),
    );
    ws.on('close', () => finish('closed'));
    ws.on('message', (data) => {
      let frame: ApplicationMessage;
      try {
        frame = JSON.parse(frameText(data)) as ApplicationMessage;
      } catch {
        return;
      }
      if (frame.type === 'end') {
        if (typeof frame.handoffData === 'string') handoffData = frame.handoffData;
        ws.close(1000);
        return finish('end');
      }
      if (frame.type !== 'text') return;
      tokens += frame.token ?? '';
      if (!frame.last) return;
      const said = tokens.replace(/\s+/g, ' ').trim();
      tokens = '';
      if (!said) return;
      const index = turns++;
      if (caller.interruptsAt === index) {
        // Halfway through the agent's words the caller speaks: what was said until then is all the line carried.
        const words = said.split(' ');
        const until = words.slice(0, Math.max(1, Math.floor(words.length / 2))).join(' ');
        lines.push({ atMs: at, speaker: 'agent', text: until });
        at += speakingMs(until);
        ws.send(
          JSON.stringify({
            type: 'interrupt',
            utteranceUntilInterrupt: until,
            durationUntilInterruptMs: speakingMs(until),
          }),
        );
        const heard = caller.answer(index, said);
        if (!heard) return;
        lines.push({ atMs: at, speaker: 'callee', text: heard.speech, confidence: heard.confidence });
        at += speakingMs(heard.speech) + TWIN_TIMES.autoSpeechTimeoutMs;
        ws.send(JSON.stringify({ type: 'prompt', voicePrompt: heard.speech, lang: settings.language, last: true }));
        return;
      }
      lines.push({ atMs: at, speaker: 'agent', text: said });
      at += speakingMs(said);
      if (caller.dropsAt === index) {
        ws.terminate();
        return finish('dropped');
      }
      if (caller.hangsUpAt === index) {
        ws.close(1000);
        return finish('hungup');
      }
      const heard = caller.answer(index, said);
      if (!heard) return;
      // The persona answers once the agent's words would have been said: an `end` sent after them comes first.
      answering = setTimeout(
        () => {
          answering = null;
          if (done) return;
          const speaksAt = at + TWIN_TIMES.answerDelayMs;
          lines.push({ atMs: speaksAt, speaker: 'callee', text: heard.speech, confidence: heard.confidence });
          at = speaksAt + speakingMs(heard.speech) + TWIN_TIMES.autoSpeechTimeoutMs;
          ws.send(JSON.stringify({ type: 'prompt', voicePrompt: heard.speech, lang: settings.language, last: true }));
        },
        (speakingMs(said) + TWIN_TIMES.answerDelayMs) * timeScale,
      );
    });
  });
}
