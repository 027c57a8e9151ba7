import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { OpenedCarrierConnection } from '../../lib/carrier-connections/connections';
import { openedConnectionsOf, verifiedConnection } from '../../lib/carrier-connections/opened-connections';
import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { isTelnyxRelayToken, TELNYX_RELAY_TOKEN_PARAMETER } from '../../lib/carriers/telnyx/telnyx-urls';
import { publicUrlOf, TWILIO_SIGNATURE_HEADER } from '../../lib/carriers/twilio/twilio-callbacks';
import { createTwilioCalls } from '../../lib/carriers/twilio/twilio-calls';
import type { TwilioConnection } from '../../lib/carriers/twilio/twilio-client';
import {
  MAX_VOICE_PROMPT_CHARS,
  messageText,
  parseInboundFrame,
  type OutboundFrame,
  type SetupFrame,
} from '../../lib/carriers/twilio/conversation-relay/frames';
import {
  createTurnQueue,
  frameBudget,
  joinUtterances,
  SOCKET_FRAME_LIMITS,
  type QueuedTurn,
} from '../../lib/carriers/twilio/conversation-relay/turn-queue';
import { ANSWER_TIMEOUT_SECONDS } from '../../lib/conversation/script-walk';
import { timeUpLine } from '../../lib/conversation/time-up';
import { testCallTimeLimitMs } from '../../lib/credits/test-call-billing';
import { configuredDialogueEngine } from '../../lib/conversation/create-engine';
import { pronouncedTokens, pronunciationsOf, type Pronunciations } from '../../lib/dictionaries/pronunciations';
import type { DialogueEngine } from '../../lib/conversation/engine';
import { log } from '../../lib/log';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { conversationKnowledge } from '../../lib/knowledge/knowledge-store';
import { createCallTools } from '../conversation/conversation-tools';
import { createCallFunctions } from '../conversation/conversation-functions';
import { createCallCalendar } from '../conversation/conversation-calendar';
import { withCalendarTools } from '../../lib/calendar/calendar-tools';
import { createEgress, type Egress } from '../../lib/http/egress';
import { tellLaddersOfOptOut } from '../../lib/temporal/do-not-call';
import { saysOptOut } from '../../lib/conversation/intents';
import { markSpokenOptOut, scriptCallOf, scriptCallOfRow, storeScriptTurns, trimAgentTurn } from './script-calls';
import { claimRelayCall, isRedirectedToVoicemail, type RelayCall } from './carrier-call-store';
import { signedTwilioConnection } from './twilio-callbacks';

/**
 * A call's ConversationRelay socket (docs/features/conversation/relay.md): the carrier opens it once the call is handed
 * to ConversationRelay (Twilio: <Connect><ConversationRelay url=".../relay">; Telnyx: conversation_relay_start with
 * url ".../relay?token=..."); the dialogue engine (lib/conversation/create-engine.ts) runs the conversation. Both carriers
 * speak the same frames. The handshake is refused with a bare HTTP status, and nothing changes, unless:
 * - the carrier's proof is right for the live connection of that carrier its path names (401): Twilio's
 *   X-Twilio-Signature over the ws(s):// URL as called, no form, with the account's auth token; Telnyx signs nothing,
 *   so its URL's token (lib/carriers/telnyx/telnyx-urls.ts telnyxRelayToken, keyed by the connection's API key);
 * - the call of the attempt its path names was placed through that connection and is still on (404);
 * - the call has had no socket before (409): one conversation per call, claimed in the database, from any process.
 * A socket that closes before the engine said `end` is a dropped conversation: the call is hung up through its
 * connection (never dialed again), and its end comes from the carrier's own end of the call as usual.
 */
const RELAY_PATH = /^\/telephony\/(twilio|telnyx)\/([^/?]+)\/calls\/([^/?]+)\/relay(?:\?.*)?$/;

/** What differs between the carriers on a relay socket. */
interface RelayCarrier {
  /** The live connection of this carrier the path names, when the handshake proves it is the carrier's; else null. */
  authenticate(
    services: AppServices,
    req: IncomingMessage,
    call: { connectionId: string; attemptId: string },
  ): Promise<OpenedCarrierConnection | null>;
  /** The carrier's id of the call a setup names (Twilio's CallSid, Telnyx's call_control_id). */
  callIdOf(setup: SetupFrame): string | undefined;
  /** Whether the `end` frame carries the handoff (Twilio hands it to <Connect>'s action; Telnyx reads the call). */
  handoffInEnd: boolean;
  /**
   * Hangs up a dropped conversation's call through its connection. Absent for Telnyx: Call Control keeps the call up
   * after a session and says it ended (call.conversation.ended, also when the socket closed or the process holding it
   * died), and that webhook hangs the call up (api/carriers/telnyx-transfer.ts): one hang-up, from any process.
   */
  hangup?(services: AppServices, connection: OpenedCarrierConnection, providerCallId: string): Promise<void>;
}

const RELAY_CARRIERS: Record<'twilio' | 'telnyx', RelayCarrier> = {
  twilio: {
    async authenticate(services, req, { connectionId }) {
      const url = publicUrlOf(services.publicBaseUrl!.replace(/^http/, 'ws'), req.url!);
      const signature = req.headers[TWILIO_SIGNATURE_HEADER.toLowerCase()];
      return signedTwilioConnection(
        services,
        connectionId,
        typeof signature === 'string' ? signature : undefined,
        url,
        {},
      );
    },
    callIdOf: (setup) => setup.callSid,
    handoffInEnd: true,
    hangup: (services, connection, providerCallId) =>
      createTwilioCalls(connection as TwilioConnection, { publicBaseUrl: services.publicBaseUrl! }).hangup(
        providerCallId,
        'in-progress',
      ),
  },
  telnyx: {
    async authenticate(services, req, call) {
      const token = new URL(req.url!, 'ws://relay').searchParams.get(TELNYX_RELAY_TOKEN_PARAMETER);
      if (!services.carrierKeyring || !token) return null;
      return verifiedConnection(
        openedConnectionsOf(services.db, services.carrierKeyring),
        call.connectionId,
        async (opened) =>
          (opened.provider === 'telnyx' || opened.provider === 'telnyx-twin') &&
          isTelnyxRelayToken((opened as TelnyxConnection).secrets.apiKey, call, token),
      );
    },
    callIdOf: (setup) => (typeof setup.callControlId === 'string' ? setup.callControlId : setup.callSid),
    handoffInEnd: false,
  },
};

/** A word of the agent's, as long as it takes to say at 150 words a minute. */
const SPOKEN_WORD_MS = 400;

/**
 * How long before a test call's time limit (the minutes its hold covers, which the carrier was dialed with) the agent
 * says the closing line and ends the conversation: the line's ten words take 4 s at 150 a minute, and the socket opens
 * a moment after the answer the carrier counts the limit from. Real time, scaled as a minute is (testMinuteMs).
 */
export const TIME_UP_LEAD_MS = 10_000;

/** WebSocket close code 1008 (RFC 6455): a message that breaks the protocol's rules. */
const POLICY_VIOLATION = 1008;

/** The largest message the socket takes: Twilio's are small JSON (a prompt is one utterance). */
const MAX_FRAME_BYTES = 64 * 1024;

function refuse(socket: Duplex, status: 401 | 404 | 409 | 500) {
  const reason = { 401: 'Unauthorized', 404: 'Not Found', 409: 'Conflict', 500: 'Internal Server Error' }[status];
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** What the conversation's tools left for its end: the handoff transfer_to_human asked for. */
interface Conversation {
  handoff: { reason: 'transfer'; summary: string | null } | null;
}

/** Marks the call's socket taken, if the call is on and had none: the one conversation of the call. */
async function claimConversation(services: AppServices, callId: string): Promise<RelayCall | null> {
  return claimRelayCall(poolSql(services.sql), callId);
}

/** The call was redirected to its voicemail step (a machine answered: Call.voicemailRedirectAt). */
async function redirectedToVoicemail(services: AppServices, callId: string): Promise<boolean> {
  return isRedirectedToVoicemail(poolSql(services.sql), callId);
}

type RelayTurnKind = 'setup' | 'prompt' | 'interrupt' | 'silence';
type RelayTurn = QueuedTurn<RelayTurnKind> & { text: string };

/** Runs one conversation on an accepted socket. */
function converse(
  ws: WebSocket,
  services: AppServices,
  carrier: RelayCarrier,
  connection: OpenedCarrierConnection,
  call: RelayCall,
  engine: DialogueEngine,
  conversation: Conversation,
  timeUp: { limitMs: number; language: string } | null,
  pronunciations: Pronunciations,
) {
  let ended = false;
  /** The time was up: the closing line was said, a reply still running says no more. */
  let cut = false;
  const send = (frame: OutboundFrame) => ws.send(JSON.stringify(frame));
  /** The lead's silence after the agent's last words (docs/features/conversation/relay.md#silence). */
  let silence: NodeJS.Timeout | null = null;
  const listen = () => {
    if (silence) clearTimeout(silence);
    silence = null;
  };
  const say = async (reply: Iterable<string> | AsyncIterable<string>) => {
    listen();
    let words = 0;
    for await (const token of pronouncedTokens(reply, pronunciations)) {
      if (cut) return;
      // Words, not tokens: a reply with pronunciations comes as one token (lib/dictionaries/pronunciations.ts).
      words += token.match(/\S+/g)?.length ?? 0;
      send({ type: 'text', token, last: false });
    }
    if (cut) return;
    send({ type: 'text', token: '', last: true });
    if (!engine.ended && engine.onSilence && ws.readyState === ws.OPEN) {
      // Twilio tells nothing of when its voice has finished: the words are timed at 150 a minute, then the lead has
      // the silence timeout to begin. A silence is handled as a frame is, after whatever is being handled.
      silence = setTimeout(
        () => {
          silence = null;
          onSilence();
        },
        words * SPOKEN_WORD_MS + (services.relaySilenceMs ?? ANSWER_TIMEOUT_SECONDS * 1000),
      );
    }
    if (engine.ended && !ended) {
      ended = true;
      // Twilio: a transfer's handoff goes to <Connect>'s action (api/carriers/twilio-transfer.ts), which
      // dials. Telnyx: call.conversation.ended, and the call's own mark (api/carriers/telnyx-transfer.ts).
      send({
        type: 'end',
        ...(carrier.handoffInEnd && conversation.handoff && { handoffData: JSON.stringify(conversation.handoff) }),
      });
    }
  };
  /**
   * One turn at a time (lib/carriers/twilio/conversation-relay/turn-queue.ts): what arrives while a turn runs waits, at most one of each
   * kind; final prompts said meanwhile are one utterance (merged, within the voicePrompt cap), as the carrier reads
   * speech over a reply: an interruption, then what was said.
   */
  const failed = (error: unknown) => {
    log.error({ err: error, callId: call.id }, 'relay: the conversation failed; closing its socket');
    ws.terminate();
  };
  const promptTurn = (text: string): RelayTurn => ({
    kind: 'prompt',
    text,
    run: async () => {
      if (ended) return;
      // An opt-out is acted on whatever the engine makes of it (a model may not call opt_out): the call ends
      // opted_out and its number is listed before the engine answers (docs/features/leads.md#the-do-not-call-list).
      if (saysOptOut(text)) await markSpokenOptOut(services, call);
      await say(engine.onPrompt(text));
    },
  });
  // Final prompts waiting join into one utterance (within the voicePrompt cap, so a flood of them stays one bounded
  // prompt); of any other kind the newer wins (the latest interruption says what was heard).
  const turns = createTurnQueue<RelayTurnKind, RelayTurn>({
    merge: (waiting, newer) =>
      waiting.kind === 'prompt' ? promptTurn(joinUtterances(waiting.text, newer.text, MAX_VOICE_PROMPT_CHARS)) : newer,
    failed,
  });
  const onSilence = () =>
    turns.push({ kind: 'silence', text: '', run: async () => (ended ? undefined : say(engine.onSilence!())) });
  // A test call out of the minutes its hold covers: the closing line (cutting a reply being said), then `end`, shortly
  // before the carrier's own time limit ends the call (docs/features/test-calls.md#length).
  const minuteScale = (services.testMinuteMs ?? 60_000) / 60_000;
  const closing =
    timeUp &&
    setTimeout(
      () => {
        if (ended || ws.readyState !== ws.OPEN) return;
        ended = true;
        cut = true;
        listen();
        send({ type: 'text', token: timeUpLine(timeUp.language), last: false });
        send({ type: 'text', token: '', last: true });
        send({ type: 'end' });
      },
      Math.max(0, timeUp.limitMs - TIME_UP_LEAD_MS) * minuteScale,
    );
  const budget = frameBudget(SOCKET_FRAME_LIMITS);
  let dropped = 0;
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    if (!budget.take()) {
      // Past the socket's frame rate: dropped unread; a sender that keeps on is cut off.
      dropped += 1;
      if (dropped === 1) log.warn({ callId: call.id }, "relay: frames past the socket's rate, dropped");
      if (dropped >= SOCKET_FRAME_LIMITS.droppedBeforeClose) ws.close(POLICY_VIOLATION, 'too many frames');
      return;
    }
    const frame = parseInboundFrame(messageText(data));
    if (!frame) return log.warn({ callId: call.id }, 'relay: a message that is not the carrier’s, ignored');
    // The lead speaks (or the carrier says anything of the lead): no longer silent.
    if (frame.type !== 'error' && frame.type !== 'setup') listen();
    switch (frame.type) {
      case 'setup':
        return turns.push({
          kind: 'setup',
          text: '',
          async run() {
            // The session must be this call's: a setup naming another call is not this call's conversation (a bug
            // or a replay). The socket is closed unheard, which ends the call as a dropped conversation does.
            if (call.providerCallId && carrier.callIdOf(frame) !== call.providerCallId) {
              log.warn({ callId: call.id }, 'relay: a setup for another call; closing its socket');
              return ws.close(POLICY_VIOLATION, 'setup names another call');
            }
            const first = await engine.start();
            return say(first ? [first] : []);
          },
        });
      case 'prompt':
        if (frame.last && !ended) turns.push(promptTurn(frame.voicePrompt));
        return;
      case 'interrupt':
        return turns.push({
          kind: 'interrupt',
          text: frame.utteranceUntilInterrupt,
          run: async () => engine.onInterrupt(frame.utteranceUntilInterrupt),
        });
      case 'dtmf':
        return;
      case 'error':
        return log.warn({ callId: call.id, description: frame.description }, 'relay: the carrier reported an error');
    }
  });
  ws.on('close', () => {
    listen();
    if (closing) clearTimeout(closing);
    if (ended || !call.providerCallId || !carrier.hangup) return;
    // Dropped: the call is hung up, once (this socket is the call's only one); its end is the carrier's own.
    // Not when a machine's voicemail step took the call over (the detection's redirect ends the session): that
    // document says the message and hangs up.
    ended = true;
    const providerCallId = call.providerCallId;
    void (async () => {
      if (await redirectedToVoicemail(services, call.id)) return;
      await carrier.hangup!(services, connection, providerCallId);
    })().catch((error: unknown) =>
      log.error({ err: error, callId: call.id }, 'relay: hanging up a dropped call failed'),
    );
  });
}

/** Takes the relay handshakes of the API's HTTP server; close() ends every conversation (the process is stopping). */
export function attachConversationRelay(server: Server, services: AppServices) {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  let defaultEgress: Egress | undefined;
  const functionEgress = () => services.egress ?? (defaultEgress ??= createEgress());

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const path = RELAY_PATH.exec(req.url ?? '');
    if (!path || !services.publicBaseUrl) return refuse(socket, 404);
    const carrier = RELAY_CARRIERS[path[1] as 'twilio' | 'telnyx'];
    const [connectionId, attemptId] = [decodeURIComponent(path[2]!), decodeURIComponent(path[3]!)];
    const connection = await carrier.authenticate(services, req, { connectionId, attemptId });
    if (!connection) return refuse(socket, 401);
    let row;
    try {
      row = await scriptCallOf(services, attemptId, connection.id);
    } catch (error) {
      if (error instanceof Refusal) return refuse(socket, 404);
      throw error;
    }
    const call = await claimConversation(services, row.id);
    if (!call) return refuse(socket, 409);
    // A test call talks the minutes its hold covers (the limit it was dialed with); a campaign's call, its length.
    const limitMs =
      call.kind === 'test'
        ? await testCallTimeLimitMs(poolSql(services.sql), { workspaceId: call.workspaceId, callId: call.id })
        : undefined;
    const timeUp = limitMs === undefined ? null : { limitMs, language: row.agent?.language ?? 'en' };
    const conversation: Conversation = { handoff: null };
    const engine = configuredDialogueEngine(
      {
        call: scriptCallOfRow(row),
        instructions: row.agent?.instructions ?? null,
        firstMessage: row.agent?.firstMessage ?? null,
        tools: createCallTools({
          sql: poolSql(services.sql),
          callId: row.id,
          onListed: ({ workspaceId, phone }) =>
            tellLaddersOfOptOut(services.temporal, poolSql(services.sql), { workspaceId, phones: [phone] }),
          onTransfer: (summary) => (conversation.handoff = { reason: 'transfer', summary }),
          functions: withCalendarTools(
            createCallCalendar(services, functionEgress(), row.id),
            createCallFunctions(
              { sql: poolSql(services.sql), egress: functionEgress(), keyring: services.carrierKeyring },
              row.id,
            ),
          ),
        }),
        knowledge: conversationKnowledge(poolSql(services.sql), row.agent ?? null),
        record: (turns) => storeScriptTurns(services, row.id, turns, false),
        trim: (step, part, text) => trimAgentTurn(services, row.id, { step, part, text }),
      },
      services.dialogue,
    );
    sockets.handleUpgrade(req, socket, head, (ws) =>
      converse(
        ws,
        services,
        carrier,
        connection,
        call,
        engine,
        conversation,
        timeUp,
        pronunciationsOf(row.agent?.hints ?? []),
      ),
    );
  }

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((error: unknown) => {
      log.error({ err: error }, 'relay: a handshake failed');
      refuse(socket, 500);
    });
  });
  return {
    close() {
      for (const ws of sockets.clients) ws.terminate();
      sockets.close();
    },
  };
}
