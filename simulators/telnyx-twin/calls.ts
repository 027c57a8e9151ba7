import { randomUUID, type KeyObject } from 'node:crypto';
import type { JsonHttp } from '../../lib/http/json-http';
import { sleep, type RetryBackoff } from '../../lib/http/post-until-answered';
import { simulatedTalkMs } from '../simulated-carrier/timeline';
import { personaAnswer, relayPersonaAnswer, type PersonaScript } from '../twilio-twin/persona';
import { TWIN_TIMES, detection, dialPlan, machineGreeting, speakingMs, type AnsweredBy } from '../twilio-twin/plan';
import { relayConversation, type RelaySettings } from '../twilio-twin/relay';
import type { PlaybackRequest } from './playback';
import { createTwinRuntime, type CallLoopControl } from '../twin-common/runtime';
import { telnyxTwinCallStore, type CallPatch, type TelnyxTwinCall } from './call-store';
import type { TwinSql } from '../twin-common/sql';
import { eventOf } from './events';
import { telnyxSignatureHeaders } from './signature';

/**
 * A call's life on the Telnyx twin (docs/features/carriers/twins.md#the-telnyx-twin), kept in its row so that a twin killed
 * mid-call goes on with it. Call Control has no document to obey: the call rings, is answered or not by its number's
 * last digit (the Twilio twin's plan, simulators/twilio-twin/plan.ts, read through `timeout_secs`), and then does what
 * the commands the REST API queued in `row.commands` say (speak, transcription, a DTMF gather, ConversationRelay, a
 * transfer, hangup), each answered by its webhooks. Its timed events wait in an agenda; one loop per live call takes the earliest, or the next command,
 * and writes it with the webhooks it owes in one statement. Times are simulated ms from the dial.
 */

export const AMD_MODES = ['premium', 'detect', 'detect_beep', 'detect_words', 'greeting_end', 'disabled'] as const;
export type AmdMode = (typeof AMD_MODES)[number];

/** What the dial asked for (row.request). */
export interface DialRequest {
  webhookUrl: string;
  timeoutSecs: number;
  timeLimitSecs: number;
  amd: AmdMode;
  /** answering_machine_detection_config.total_analysis_time_millis (default 3500). */
  amdTotalAnalysisMs: number;
  /**
   * incoming: a person called a number of the account (POST /control/incoming-calls): the call waits, parked, for the
   * application's `answer`; the person is the `from`. Absent: a dial.
   */
  direction?: 'incoming';
  /** link_to: the call whose session this one shares (its person is on hold for it while bridge_intent). */
  linkTo?: string | null;
  bridgeIntent?: boolean;
  /** TEST CONTROL: the call's call.hangup webhook is never sent (lost on the way); the call is still fetched as Telnyx has it. */
  loseHangupWebhook?: boolean;
}

/** The number of the person on the call (who answers a dial, who called in): personas play it. */
export const personNumber = (row: TelnyxTwinCall) =>
  (row.request as DialRequest).direction === 'incoming' ? row.from : row.to;

/** A command the REST API accepted (row.commands), taken by the call's loop in order. */
export interface QueuedCommand {
  seq: number;
  name:
    | 'answer'
    | 'speak'
    | 'gather_using_speak'
    | 'transcription_start'
    | 'transcription_stop'
    | 'conversation_relay_start'
    | 'transfer'
    | 'bridge'
    /** Not Telnyx's: the call this one was bridged to hung up, so this one is hung up too (no park_after_unbridge). */
    | 'unbridged'
    /** Not Telnyx's: a call was dialed linked to this one with bridge_intent (`linked`), or has ended unbridged. */
    | 'linked'
    | 'unlinked'
    | 'playback_start'
    | 'record_start'
    | 'hangup';
  commandId: string | null;
  clientState: string | null;
  /** When it was accepted (ms since the epoch). */
  at: number;
  params: {
    payload?: string;
    voice?: string;
    language?: string | null;
    hints?: string[];
    /** transcription_start's interim_results. */
    interimResults?: boolean;
    timeoutMillis?: number;
    validDigits?: string;
    maximumDigits?: number;
    /** conversation_relay_start's. */
    url?: string;
    greeting?: string | null;
    parameters?: Record<string, string>;
    /** transfer's. */
    to?: string;
    from?: string | null;
    timeoutSecs?: number;
    webhookUrl?: string | null;
    targetLegClientState?: string | null;
    /** bridge's (and unbridged's): the other call, and its number for the log. */
    bridgeWith?: string;
    bridgeWithNumber?: string;
    /** playback_start's, its audio fetched (playback.ts). */
    playback?: PlaybackRequest;
    /** record_start's. */
    recording?: { format: 'wav' | 'mp3'; channels: 'single' | 'dual' };
  };
}

export interface LogEntry {
  atMs: number;
  speaker: 'agent' | 'callee' | 'twin';
  kind:
    | 'say'
    | 'gather'
    | 'speech'
    | 'silence'
    | 'dtmf'
    | 'greeting'
    | 'hangup'
    | 'amd'
    | 'transcription'
    | 'relay'
    | 'transfer'
    | 'bridge'
    | 'playback'
    | 'recording';
  text?: string;
  voice?: string | null;
  language?: string | null;
  confidence?: number;
}

type Agenda =
  | { kind: 'ringing' }
  | { kind: 'answer'; by: 'human' | 'machine' }
  | { kind: 'end'; cause: HangupCause; sip: string; source: 'caller' | 'callee' | 'unknown' }
  | { kind: 'amd'; event: string; result: string }
  | { kind: 'audio-end' }
  | { kind: 'speech'; text: string; confidence: number }
  | { kind: 'interim'; text: string }
  | { kind: 'gather-end'; status: 'valid' | 'timeout'; digits: string }
  | { kind: 'transfer-answer' }
  | { kind: 'transfer-end'; cause: HangupCause; sip: string };

type HangupCause =
  'normal_clearing' | 'originator_cancel' | 'timeout' | 'time_limit' | 'user_busy' | 'not_found' | 'unspecified';

interface Audio {
  kind: 'speak' | 'gather';
  text: string;
  voice: string | null;
  language: string | null;
  /** The client_state of its webhooks (the command's, else the call's then). */
  clientState: string | null;
  gather?: { timeoutMillis: number; validDigits: string; maximumDigits: number };
}

export interface CallState {
  clockMs: number;
  agenda: { atMs: number; item: Agenda }[];
  answer: { atMs: number; by: 'human' | 'machine' } | null;
  /** What plays now (its end is in the agenda), then what waits for it. */
  playing: Audio | null;
  queue: Audio[];
  /** A gather that has played its prompt and waits for digits. */
  listening: { clientState: string | null } | null;
  transcription: { hints: string[]; language: string | null; interimResults?: boolean } | null;
  /**
   * The call's audio files: an overlay=false file plays, those commanded after it wait in its queue (`waiting`), and
   * overlays are mixed on top of it. The twin does not time a file's length, so what plays plays to the hang-up and
   * what waits never starts (docs/features/carriers/twins.md#the-telnyx-twin).
   */
  playbacks?: { url: string; overlay: boolean; clientState: string | null; waiting?: boolean }[];
  /** The recordings record_start began (recordings.ts): each from its start to the call's end. */
  recordings?: TwinCallRecording[];
  /** A ConversationRelay session started and not yet held (the call's loop holds it to its end). */
  relay?: { settings: RelaySettings; atMs: number } | null;
  /** The human's leg of a transfer: ringing (answeredAtMs null), then bridged to the callee until either hangs up. */
  transfer?: {
    callControlId: string;
    to: string;
    from: string;
    webhookUrl: string;
    clientState: string | null;
    answeredAtMs: number | null;
  } | null;
  /** The call actions/bridge joined this one to (either was commanded): hung up when it hangs up. */
  bridge?: { callControlId: string } | null;
  /**
   * A call dialed with link_to this one and bridge_intent, not yet bridged nor ended: the person waits for it (on
   * hold) rather than hanging up when nothing is said.
   */
  linked?: string | null;
  /** Answers the persona has given (or not): its next answer is its turns-th. */
  turns: number;
  /** The last moment anyone spoke: the callee hangs up when nothing has happened for the number's talk time. */
  lastActivityMs: number;
  commandsTaken: number;
  webhookSeq: number;
  /** Where the call's webhooks go from now on: an incoming call's `answer` names its own (absent: the request's). */
  webhookUrl?: string | null;
}

/** A recording of the call (recordings.ts serves it once the call has ended and it is saved). */
export interface TwinCallRecording {
  id: string;
  format: 'wav' | 'mp3';
  channels: 'single' | 'dual';
  /** The call's clock when it started, and when it was saved (the call's end): null while the call is on. */
  startMs: number;
  endMs: number | null;
  clientState: string | null;
}

export function initialState(request: DialRequest, to: string): CallState {
  const plan = dialPlan(to, request.timeoutSecs);
  const end = plan.end;
  const agenda: CallState['agenda'] =
    // An incoming call waits for the application's answer (or hang-up): nothing happens by itself.
    request.direction === 'incoming'
      ? []
      : plan.ringingAtMs !== null
        ? [{ atMs: plan.ringingAtMs, item: { kind: 'ringing' } }]
        : [{ atMs: end!.atMs, item: unansweredEnd(end!.sipResponseCode) }];
  return {
    clockMs: 0,
    agenda,
    answer: null,
    playing: null,
    queue: [],
    listening: null,
    transcription: null,
    turns: 0,
    lastActivityMs: 0,
    commandsTaken: 0,
    webhookSeq: 1,
  };
}

/** How a call nobody answered ends, by the SIP response of the twin's plan. */
function unansweredEnd(sip: number): Agenda {
  const cause: HangupCause =
    sip === 486 ? 'user_busy' : sip === 487 ? 'timeout' : sip === 404 ? 'not_found' : 'unspecified';
  return { kind: 'end', cause, sip: String(sip), source: sip === 487 ? 'caller' : 'callee' };
}

/** Telnyx's results of answering-machine detection for what the twin's plan found (Twilio's AnsweredBy values). */
function amdEvents(
  mode: AmdMode,
  to: string,
  by: 'human' | 'machine',
  totalAnalysisMs: number,
  scripted: AnsweredBy | null,
): { atMs: number; event: string; result: string }[] {
  if (mode === 'disabled') return [];
  const found = detection(to, by, 'Enable', totalAnalysisMs / 1_000, scripted);
  const greeting = detection(to, by, 'DetectMessageEnd', 60, scripted);
  const events: { atMs: number; event: string; result: string }[] = [];
  const machine = found.answeredBy.startsWith('machine');
  if (mode === 'premium') {
    const result =
      found.answeredBy === 'human'
        ? 'human_residence'
        : found.answeredBy === 'fax'
          ? 'fax_detected'
          : machine
            ? 'machine'
            : 'not_sure';
    events.push({ atMs: found.durationMs, event: 'call.machine.premium.detection.ended', result });
    if (greeting.answeredBy === 'machine_end_beep')
      events.push({ atMs: greeting.durationMs, event: 'call.machine.premium.greeting.ended', result: 'beep_detected' });
    return events;
  }
  // Standard detection: human, machine (a fax is a machine to it) or not_sure.
  const result =
    found.answeredBy === 'human' ? 'human' : machine || found.answeredBy === 'fax' ? 'machine' : 'not_sure';
  events.push({ atMs: found.durationMs, event: 'call.machine.detection.ended', result });
  if (result === 'machine' && mode !== 'detect') {
    const beep = greeting.answeredBy === 'machine_end_beep';
    // detect_beep reports a greeting's end only when it ends with a beep.
    if (beep || mode !== 'detect_beep')
      events.push({
        atMs: greeting.durationMs,
        event: 'call.machine.greeting.ended',
        result: beep ? 'beep_detected' : greeting.answeredBy.startsWith('machine') ? 'ended' : 'not_sure',
      });
  }
  return events;
}

/** DTMF a scripted answer presses: an answer made only of keys. */
const DTMF = /^[0-9*#A-D]+$/;

export interface CallRunnerOptions {
  sql: TwinSql;
  http: JsonHttp;
  timeScale: number;
  /** The key an account's webhooks are signed with. */
  signingKeyOf: (account: string) => KeyObject | undefined;
  delivery: 'until-answered' | 'once';
  retry: RetryBackoff;
  /** A saved recording's download URLs (recordings.ts), for call.recording.saved's recording_urls. */
  recordingUrls: (recording: TwinCallRecording) => Record<string, string>;
}

interface Effects {
  state: CallState;
  data: CallPatch;
  log: LogEntry[];
  /** The webhooks owed, each to its URL (null: the dial's webhook_url). */
  webhooks: { url: string | null; event: Record<string, unknown> }[];
  /** The call bridged to this one, which this one's end hangs up (once this one's end is written). */
  unbridge?: string;
  /** The call this one was dialed linked to, told that this one ended unbridged. */
  unlink?: string;
}

const ENDED = 'hangup';

export function createCallRunner(options: CallRunnerOptions) {
  const { http, timeScale } = options;
  const store = telnyxTwinCallStore(options.sql);
  const runtime = createTwinRuntime({ name: 'telnyx twin', retry: options.retry, delivery: options.delivery });

  const wallAt = (row: TelnyxTwinCall, atMs: number) => new Date(row.createdAt.getTime() + atMs * timeScale);
  const virtualNow = (row: TelnyxTwinCall) => (Date.now() - row.createdAt.getTime()) / timeScale;

  function deliver(id: string, account: string) {
    runtime.deliver(id, {
      owed: () => store.owed(id),
      send: async (webhook, _attempt, signal) => {
        const key = options.signingKeyOf(account);
        if (!key) throw new Error(`no signing key for account ${account}`);
        const body = JSON.stringify(webhook.event);
        const response = await http.request('POST', webhook.url, {
          rawBody: body,
          contentType: 'application/json',
          headers: { ...telnyxSignatureHeaders(key, body), 'User-Agent': 'telnyx-webhooks' },
          signal,
        });
        return response.status >= 200 && response.status <= 299;
      },
      delivered: (webhook) => store.delivered(id, webhook.seq),
    });
  }

  /** A webhook of the call: Telnyx's event envelope, the call's ids, its client_state, and the event's members. */
  function webhook(
    row: TelnyxTwinCall,
    effects: Effects,
    eventType: string,
    atMs: number,
    members: Record<string, unknown>,
    options: { parties?: boolean; clientState?: string | null; callControlId?: boolean } = {},
  ) {
    if (eventType === 'call.hangup' && (row.request as DialRequest).loseHangupWebhook) return;
    const clientState =
      options.clientState !== undefined
        ? options.clientState
        : ((effects.data.clientState as string | null | undefined) ?? row.clientState);
    effects.webhooks.push({
      url: null,
      event: eventOf(eventType, wallAt(row, atMs), {
        ...(options.callControlId !== false && { call_control_id: row.callControlId }),
        call_leg_id: row.callLegId,
        call_session_id: row.callSessionId,
        ...(clientState && { client_state: clientState }),
        connection_id: row.connectionId,
        ...(options.parties !== false && { from: row.from, to: row.to }),
        ...members,
      }),
    });
  }

  /** A webhook of the human's leg a transfer dialed: its own ids and client_state, to the transfer's webhook_url. */
  function legWebhook(
    row: TelnyxTwinCall,
    effects: Effects,
    eventType: string,
    atMs: number,
    members: Record<string, unknown>,
  ) {
    const leg = effects.state.transfer!;
    effects.webhooks.push({
      url: leg.webhookUrl,
      event: eventOf(eventType, wallAt(row, atMs), {
        call_control_id: leg.callControlId,
        call_leg_id: leg.callControlId.replace(/^v3:/, ''),
        call_session_id: row.callSessionId,
        ...(leg.clientState && { client_state: leg.clientState }),
        connection_id: row.connectionId,
        from: leg.from,
        to: leg.to,
        ...members,
      }),
    });
  }

  const schedule = (state: CallState, atMs: number, item: Agenda) => {
    state.agenda.push({ atMs, item });
    state.agenda.sort((a, b) => a.atMs - b.atMs);
  };

  /** Starts the audio at the head of the queue, at atMs. */
  function play(row: TelnyxTwinCall, effects: Effects, atMs: number) {
    const { state } = effects;
    const audio = state.queue.shift();
    if (!audio) return;
    state.playing = audio;
    effects.log.push({
      atMs,
      speaker: 'agent',
      kind: audio.kind === 'speak' ? 'say' : 'gather',
      text: audio.text,
      voice: audio.voice,
      language: audio.language,
    });
    if (audio.kind === 'speak')
      webhook(row, effects, 'call.speak.started', atMs, {}, { parties: false, clientState: audio.clientState });
    schedule(state, atMs + speakingMs(audio.text), { kind: 'audio-end' });
  }

  function end(
    row: TelnyxTwinCall,
    effects: Effects,
    atMs: number,
    cause: HangupCause,
    sip: string,
    source: 'caller' | 'callee' | 'unknown',
  ) {
    const { state } = effects;
    // What was playing or listening ends with the call.
    for (const playback of (state.playbacks ?? []).filter((played) => !played.waiting))
      webhook(
        row,
        effects,
        'call.playback.ended',
        atMs,
        { media_url: playback.url, overlay: playback.overlay, status: 'call_hangup' },
        { parties: false, clientState: playback.clientState },
      );
    state.playbacks = [];
    if (state.playing?.kind === 'speak')
      webhook(row, effects, 'call.speak.ended', atMs, { status: 'call_hangup' }, { parties: false });
    if (state.playing?.kind === 'gather' || state.listening)
      webhook(row, effects, 'call.gather.ended', atMs, { digits: '', status: 'call_hangup' });
    // The human's leg ends with the call: hung up after talking, or cancelled while it rang.
    if (state.transfer) {
      const bridged = state.transfer.answeredAtMs !== null;
      legWebhook(row, effects, 'call.hangup', atMs, {
        hangup_cause: bridged ? 'normal_clearing' : 'originator_cancel',
        hangup_source: bridged ? source : 'caller',
        sip_hangup_cause: bridged ? '200' : '487',
        start_time: row.createdAt.toISOString(),
        state: 'hangup',
      });
      state.transfer = null;
    }
    // A bridged call's other leg is hung up with it (bridge's default: no park_after_unbridge).
    if (state.bridge) {
      effects.unbridge = state.bridge.callControlId;
      state.bridge = null;
    } else if ((row.request as DialRequest).linkTo && (row.request as DialRequest).bridgeIntent)
      effects.unlink = (row.request as DialRequest).linkTo!;
    state.playing = null;
    state.queue = [];
    state.listening = null;
    state.relay = null;
    state.agenda = [];
    state.clockMs = atMs;
    const durationSec = state.answer ? Math.ceil((atMs - state.answer.atMs) / 1_000) : null;
    Object.assign(effects.data, { status: ENDED, hangupCause: cause, endTime: wallAt(row, atMs), durationSec });
    effects.log.push({ atMs, speaker: source === 'caller' ? 'agent' : 'twin', kind: 'hangup', text: cause });
    webhook(row, effects, 'call.hangup', atMs, {
      hangup_cause: cause,
      hangup_source: source,
      sip_hangup_cause: sip,
      start_time: row.createdAt.toISOString(),
      state: 'hangup',
    });
    // Each recording is saved with the call's end; Telnyx's event names neither the recording nor the call's id.
    for (const recording of state.recordings ?? []) {
      recording.endMs = atMs;
      webhook(
        row,
        effects,
        'call.recording.saved',
        atMs,
        {
          channels: recording.channels,
          recording_started_at: wallAt(row, recording.startMs).toISOString(),
          recording_ended_at: wallAt(row, atMs).toISOString(),
          recording_urls: options.recordingUrls(recording),
        },
        { parties: false, clientState: recording.clientState, callControlId: false },
      );
    }
  }

  /** The person answers a question just asked while transcription runs: their words, 0.6 s after it ends. */
  function answerQuestion(row: TelnyxTwinCall, effects: Effects, atMs: number, question: string) {
    const { state } = effects;
    if (state.answer?.by !== 'human' || !state.transcription || !question.includes('?')) return;
    const heard = personaAnswer(
      personNumber(row),
      row.persona as PersonaScript | null,
      state.turns++,
      question,
      state.transcription.hints,
    );
    const speaksAt = atMs + TWIN_TIMES.answerDelayMs;
    if (!heard || DTMF.test(heard.speech)) {
      effects.log.push({ atMs: speaksAt, speaker: 'callee', kind: 'silence' });
      return;
    }
    effects.log.push({
      atMs: speaksAt,
      speaker: 'callee',
      kind: 'speech',
      text: heard.speech,
      confidence: heard.confidence,
      language: state.transcription.language,
    });
    // Interim results: the words heard so far, as each word ends (the last one's is the final result).
    const words = heard.speech.split(/\s+/);
    if (state.transcription.interimResults)
      for (let count = 1; count < words.length; count++) {
        const partial = words.slice(0, count).join(' ');
        schedule(state, speaksAt + speakingMs(partial), { kind: 'interim', text: partial });
      }
    schedule(state, speaksAt + speakingMs(heard.speech), {
      kind: 'speech',
      text: heard.speech,
      confidence: heard.confidence,
    });
  }

  function take(row: TelnyxTwinCall, effects: Effects, atMs: number, item: Agenda) {
    const { state } = effects;
    const request = row.request as unknown as DialRequest;
    switch (item.kind) {
      case 'ringing': {
        effects.data.status = 'ringing';
        const plan = dialPlan(row.to, request.timeoutSecs);
        if (plan.answer) schedule(state, plan.answer.atMs, { kind: 'answer', by: plan.answer.by });
        else schedule(state, plan.end!.atMs, unansweredEnd(plan.end!.sipResponseCode));
        return;
      }
      case 'answer': {
        state.answer = { atMs, by: item.by };
        state.lastActivityMs = atMs;
        Object.assign(effects.data, { status: 'answered', answeredAt: wallAt(row, atMs) });
        webhook(row, effects, 'call.answered', atMs, { start_time: row.createdAt.toISOString(), state: 'answered' });
        if (item.by === 'machine')
          effects.log.push({ atMs, speaker: 'callee', kind: 'greeting', text: machineGreeting(row.to) });
        const scripted = (row.persona as PersonaScript | null)?.answeredBy ?? null;
        for (const found of amdEvents(request.amd, row.to, item.by, request.amdTotalAnalysisMs, scripted))
          schedule(state, atMs + found.atMs, { kind: 'amd', event: found.event, result: found.result });
        return;
      }
      case 'amd':
        if (item.event.endsWith('detection.ended')) effects.data.amdResult = item.result;
        effects.log.push({ atMs, speaker: 'twin', kind: 'amd', text: `${item.event}: ${item.result}` });
        webhook(row, effects, item.event, atMs, { result: item.result });
        return;
      case 'end':
        return end(row, effects, atMs, item.cause, item.sip, item.source);
      case 'audio-end': {
        const audio = state.playing!;
        state.playing = null;
        state.lastActivityMs = atMs;
        if (audio.kind === 'speak') {
          webhook(
            row,
            effects,
            'call.speak.ended',
            atMs,
            { status: 'completed' },
            { parties: false, clientState: audio.clientState },
          );
          answerQuestion(row, effects, atMs, audio.text);
        } else {
          // The prompt has played: the callee presses the scripted keys, or nothing until the timeout.
          state.listening = { clientState: audio.clientState };
          const scripted =
            state.answer?.by === 'human'
              ? personaAnswer(personNumber(row), row.persona as PersonaScript | null, state.turns++, audio.text, [])
              : null;
          const gather = audio.gather!;
          const keys = scripted && DTMF.test(scripted.speech) ? scripted.speech : null;
          const digits = keys
            ? [...keys]
                .filter((key) => gather.validDigits.includes(key))
                .slice(0, gather.maximumDigits)
                .join('')
            : '';
          if (digits) {
            const doneAt = atMs + TWIN_TIMES.answerDelayMs + digits.length * 300;
            effects.log.push({ atMs: atMs + TWIN_TIMES.answerDelayMs, speaker: 'callee', kind: 'dtmf', text: digits });
            schedule(state, doneAt, { kind: 'gather-end', status: 'valid', digits });
          } else {
            effects.log.push({ atMs, speaker: 'callee', kind: 'silence' });
            schedule(state, atMs + gather.timeoutMillis, { kind: 'gather-end', status: 'timeout', digits: '' });
          }
          // What was queued after a gather plays once it has ended.
          return;
        }
        play(row, effects, atMs);
        return;
      }
      case 'speech':
      case 'interim':
        state.lastActivityMs = atMs;
        if (state.transcription) transcription(row, effects, atMs, item);
        return;
      case 'transfer-answer': {
        // The human answered: both legs are bridged, and talk for as long as an answered call to the number lasts.
        const leg = state.transfer;
        if (!leg) return;
        leg.answeredAtMs = atMs;
        state.lastActivityMs = atMs;
        effects.log.push({ atMs, speaker: 'twin', kind: 'transfer', text: `answered by ${leg.to}; bridged` });
        legWebhook(row, effects, 'call.answered', atMs, {
          start_time: wallAt(row, atMs).toISOString(),
          state: 'answered',
        });
        legWebhook(row, effects, 'call.bridged', atMs, {});
        webhook(row, effects, 'call.bridged', atMs, {});
        schedule(state, atMs + simulatedTalkMs(leg.to), {
          kind: 'end',
          cause: 'normal_clearing',
          sip: '200',
          source: 'callee',
        });
        return;
      }
      case 'transfer-end': {
        // Nobody answered the human's leg: it hangs up, and the callee's call stays on for further commands.
        const leg = state.transfer;
        if (!leg) return;
        state.lastActivityMs = atMs;
        effects.log.push({ atMs, speaker: 'twin', kind: 'transfer', text: `${leg.to}: ${item.cause}` });
        legWebhook(row, effects, 'call.hangup', atMs, {
          hangup_cause: item.cause,
          hangup_source: 'callee',
          sip_hangup_cause: item.sip,
          start_time: wallAt(row, atMs).toISOString(),
          state: 'hangup',
        });
        state.transfer = null;
        return;
      }
      case 'gather-end': {
        const listening = state.listening;
        state.listening = null;
        state.lastActivityMs = atMs;
        if (listening)
          webhook(
            row,
            effects,
            'call.gather.ended',
            atMs,
            { digits: item.digits, status: item.status },
            { clientState: listening.clientState },
          );
        play(row, effects, atMs);
        return;
      }
    }
  }

  /**
   * The call.transcription webhook of what the callee said: final (the speech result, with its confidence) or
   * interim (a partial result while the callee is still speaking).
   */
  function transcription(
    row: TelnyxTwinCall,
    effects: Effects,
    atMs: number,
    heard: Extract<Agenda, { kind: 'speech' | 'interim' }>,
  ) {
    const transcriptionData =
      heard.kind === 'speech'
        ? { confidence: heard.confidence, is_final: true, transcript: heard.text }
        : { is_final: false, transcript: heard.text };
    webhook(row, effects, 'call.transcription', atMs, { transcription_data: transcriptionData }, { parties: false });
  }

  /** A command the REST API queued, taken at atMs (when it was accepted, or the call's clock if later). */
  function command(row: TelnyxTwinCall, effects: Effects, atMs: number, queued: QueuedCommand) {
    const { state } = effects;
    state.commandsTaken = queued.seq + 1;
    if (effects.data.status === ENDED || row.status === ENDED) return;
    if (queued.clientState) effects.data.clientState = queued.clientState;
    const clientState = queued.clientState ?? (effects.data.clientState as string | undefined) ?? row.clientState;
    const { params } = queued;
    switch (queued.name) {
      case 'answer':
        // The application takes the incoming call: its webhooks go to the URL the answer named from now on.
        state.answer = { atMs, by: 'human' };
        state.lastActivityMs = atMs;
        if (params.webhookUrl) state.webhookUrl = params.webhookUrl;
        Object.assign(effects.data, { status: 'answered', answeredAt: wallAt(row, atMs) });
        webhook(row, effects, 'call.answered', atMs, { start_time: row.createdAt.toISOString(), state: 'answered' });
        return;
      case 'hangup':
        return state.answer
          ? end(row, effects, atMs, 'normal_clearing', '200', 'caller')
          : end(row, effects, atMs, 'originator_cancel', '487', 'caller');
      case 'transcription_start':
        state.transcription = {
          hints: params.hints ?? [],
          language: params.language ?? null,
          interimResults: params.interimResults ?? false,
        };
        effects.log.push({ atMs, speaker: 'twin', kind: 'transcription', text: 'started' });
        return;
      case 'transcription_stop':
        state.transcription = null;
        effects.log.push({ atMs, speaker: 'twin', kind: 'transcription', text: 'stopped' });
        return;
      case 'conversation_relay_start':
        // What plays stops: the session has the call (held by the call's loop, relaySession).
        state.playing = null;
        state.queue = [];
        state.agenda = state.agenda.filter((entry) => entry.item.kind !== 'audio-end');
        state.relay = {
          atMs,
          settings: {
            url: params.url!,
            welcomeGreeting: params.greeting ?? null,
            language: params.language ?? 'en',
            voice: params.voice ?? null,
            hints: params.hints ?? [],
            parameters: params.parameters ?? {},
          },
        };
        effects.log.push({ atMs, speaker: 'twin', kind: 'relay', text: `started: ${params.url!.split('?')[0]}` });
        return;
      case 'transfer': {
        const to = params.to!;
        const plan = dialPlan(to, params.timeoutSecs ?? 30);
        state.transfer = {
          callControlId: `v3:${randomUUID()}`,
          to,
          from: params.from ?? row.from,
          webhookUrl: params.webhookUrl ?? (row.request as unknown as DialRequest).webhookUrl,
          clientState: params.targetLegClientState ?? null,
          answeredAtMs: null,
        };
        effects.log.push({ atMs, speaker: 'twin', kind: 'transfer', text: `dialing ${to}` });
        legWebhook(row, effects, 'call.initiated', atMs, { direction: 'outgoing', state: 'bridging' });
        if (plan.answer) schedule(state, atMs + plan.answer.atMs, { kind: 'transfer-answer' });
        else {
          const ended = unansweredEnd(plan.end!.sipResponseCode) as Extract<Agenda, { kind: 'end' }>;
          schedule(state, atMs + plan.end!.atMs, { kind: 'transfer-end', cause: ended.cause, sip: ended.sip });
        }
        return;
      }
      case 'bridge':
        // The two calls' audio joined (either side was commanded; both get call.bridged): they talk until one hangs up.
        state.bridge = { callControlId: params.bridgeWith! };
        if (state.linked === params.bridgeWith) state.linked = null;
        state.lastActivityMs = atMs;
        effects.log.push({ atMs, speaker: 'twin', kind: 'bridge', text: `bridged with ${params.bridgeWithNumber}` });
        webhook(row, effects, 'call.bridged', atMs, {});
        return;
      case 'linked':
        state.linked = params.bridgeWith!;
        return;
      case 'unlinked':
        if (state.linked !== params.bridgeWith) return;
        state.linked = null;
        state.lastActivityMs = atMs;
        return;
      case 'unbridged':
        if (state.bridge?.callControlId !== params.bridgeWith) return;
        state.bridge = null;
        return end(row, effects, atMs, 'normal_clearing', '200', 'unknown');
      case 'playback_start': {
        const playback = params.playback!;
        const fetched = playback.fetched!;
        const members = { media_url: playback.audioUrl, overlay: playback.overlay };
        const said = `${playback.audioUrl.split('?')[0]} overlay=${playback.overlay} loop=${playback.loop} target_legs=${playback.targetLegs} audio_type=${playback.audioType}`;
        if (!fetched.playable) {
          effects.log.push({ atMs, speaker: 'twin', kind: 'playback', text: `failed: ${said}: ${fetched.detail}` });
          webhook(
            row,
            effects,
            'call.playback.ended',
            atMs,
            {
              ...members,
              status: fetched.status === null || fetched.status >= 400 ? 'file_not_found' : 'failed',
              status_detail: fetched.detail,
            },
            { parties: false, clientState },
          );
          return;
        }
        const playbacks = (state.playbacks ??= []);
        // "If multiple play audio commands are issued consecutively, the audio files will be placed in a queue".
        const waiting = !playback.overlay && playbacks.some((played) => !played.overlay && !played.waiting);
        playbacks.push({ url: playback.audioUrl, overlay: playback.overlay, clientState, ...(waiting && { waiting }) });
        if (waiting) {
          effects.log.push({ atMs, speaker: 'twin', kind: 'playback', text: `queued: ${said}` });
          return;
        }
        effects.log.push({
          atMs,
          speaker: 'agent',
          kind: 'playback',
          text: `started: ${said} bytes=${fetched.bytes} sha256=${fetched.sha256}`,
        });
        webhook(row, effects, 'call.playback.started', atMs, members, { parties: false, clientState });
        return;
      }
      case 'record_start': {
        const { format, channels } = params.recording!;
        const recording = { id: randomUUID(), format, channels, startMs: atMs, endMs: null, clientState };
        (state.recordings ??= []).push(recording);
        effects.log.push({ atMs, speaker: 'twin', kind: 'recording', text: `started: ${format} ${channels}` });
        return;
      }
      case 'speak':
      case 'gather_using_speak':
        state.queue.push({
          kind: queued.name === 'speak' ? 'speak' : 'gather',
          text: params.payload!,
          voice: params.voice ?? null,
          language: params.language ?? null,
          clientState,
          ...(queued.name === 'gather_using_speak' && {
            gather: {
              timeoutMillis: params.timeoutMillis ?? 60_000,
              validDigits: params.validDigits ?? '0123456789#*',
              maximumDigits: params.maximumDigits ?? 128,
            },
          }),
        });
        if (!state.playing && !state.listening) play(row, effects, atMs);
        return;
    }
  }

  async function commit(row: TelnyxTwinCall, effects: Effects): Promise<TelnyxTwinCall> {
    const { state } = effects;
    let log = [...(row.log as unknown as LogEntry[]), ...effects.log];
    if (effects.data.status === ENDED) log = log.filter((entry) => entry.atMs <= state.clockMs);
    log.sort((a, b) => a.atMs - b.atMs);
    const first = state.webhookSeq;
    state.webhookSeq += effects.webhooks.length;
    const request = row.request as unknown as DialRequest;
    const updated = await store.commit(row.callControlId, {
      patch: effects.data,
      state,
      log,
      webhooks: effects.webhooks.map((webhook, index) => ({
        seq: first + index,
        url: webhook.url ?? state.webhookUrl ?? request.webhookUrl,
        method: 'POST',
        event: webhook.event,
      })),
    });
    if (effects.webhooks.length > 0) deliver(row.callControlId, row.account);
    for (const [name, other] of [
      ['unbridged', effects.unbridge],
      ['unlinked', effects.unlink],
    ] as const)
      if (other && (await tellCall(other, name, row.callControlId))) wake(other);
    return updated;
  }

  /** Queues one of the twin's own commands (not Telnyx's) on another call: what this call did that it hears of. */
  const tellCall = (id: string, name: 'unbridged' | 'unlinked' | 'linked', about: string) =>
    store.appendCommand(id, {
      name,
      commandId: null,
      clientState: null,
      at: Date.now(),
      params: { bridgeWith: about },
    });

  const effectsOf = (row: TelnyxTwinCall): Effects => ({
    state: structuredClone(row.state as unknown as CallState),
    data: {},
    log: [],
    webhooks: [],
  });

  /** When the callee, left with nothing happening for the number's talk time, hangs up; and the time limit. */
  function timedEnds(row: TelnyxTwinCall, state: CallState): { atMs: number; item: Agenda }[] {
    if (!state.answer) return [];
    const request = row.request as unknown as DialRequest;
    const quiet =
      !state.playing &&
      !state.listening &&
      !state.transfer &&
      !state.linked &&
      !state.agenda.some((entry) => entry.item.kind === 'speech' || entry.item.kind === 'interim');
    return [
      {
        atMs: state.answer.atMs + request.timeLimitSecs * 1_000,
        item: { kind: 'end', cause: 'time_limit', sip: '200', source: 'unknown' },
      },
      ...(quiet
        ? [
            {
              atMs: state.lastActivityMs + simulatedTalkMs(personNumber(row)),
              item: { kind: 'end', cause: 'normal_clearing', sip: '200', source: 'callee' } as Agenda,
            },
          ]
        : []),
    ];
  }

  /**
   * A ConversationRelay session (docs/features/conversation/relay.md#the-telnyx-twin), held to its end by the call's
   * loop: the twin opens the URL conversation_relay_start gave (Telnyx signs nothing: the URL carries the
   * application's own proof), sends `setup` with the call's ids, then the persona's answers as `prompt`s. However it
   * ends, call.conversation.ended follows (reason customer_disconnect when the application closed the socket without
   * `end`) and the call stays on for the application's next command (a transfer, a hang-up), unless the callee hung
   * up. A twin stopped mid-session loses it; the session starts again when the twin resumes the call, as a new socket.
   */
  async function relaySession(row: TelnyxTwinCall, effects: Effects) {
    const { state } = effects;
    const { settings, atMs: startedAt } = state.relay!;
    state.relay = null;
    const persona = row.persona as PersonaScript | null;
    const request = row.request as unknown as DialRequest;
    const atMs = Math.max(state.clockMs, startedAt);
    const sessionId = randomUUID();
    const outcome = await relayConversation({
      settings,
      headers: {},
      sessionId,
      setup: {
        accountSid: row.account,
        callSid: row.callControlId,
        callControlId: row.callControlId,
        callSessionId: row.callSessionId,
        callLegId: row.callLegId,
        from: row.from,
        to: row.to,
        direction: request.direction === 'incoming' ? 'inbound' : 'outbound',
        callerName: '',
        callStatus: 'active',
      },
      answer: (index, said) => relayPersonaAnswer(personNumber(row), persona, index, said, settings.hints),
      dropsAt: persona?.relayDropsAt ?? null,
      interruptsAt: persona?.relayInterruptsAt ?? null,
      hangsUpAt: persona?.relayHangsUpAt ?? null,
      atMs,
      timeScale,
      signal: AbortSignal.any([runtime.signal, AbortSignal.timeout(request.timeLimitSecs * 1_000 * timeScale)]),
    });
    for (const line of outcome.lines)
      effects.log.push({
        atMs: line.atMs,
        speaker: line.speaker,
        kind: line.speaker === 'agent' ? 'say' : 'speech',
        text: line.text,
        ...(line.speaker === 'agent' ? { voice: settings.voice } : { confidence: line.confidence }),
        language: settings.language,
      });
    const at = outcome.endedAtMs;
    state.clockMs = Math.max(state.clockMs, at);
    state.lastActivityMs = at;
    const how =
      outcome.how === 'refused'
        ? `refused (HTTP ${outcome.status ?? 'none'})`
        : outcome.how === 'end'
          ? 'ended'
          : outcome.how;
    effects.log.push({ atMs: at, speaker: 'twin', kind: 'relay', text: how });
    webhook(row, effects, 'call.conversation.ended', at, {
      conversation_id: sessionId,
      duration_sec: Math.round((at - atMs) / 1_000),
      reason: outcome.how === 'closed' ? 'customer_disconnect' : null,
      calling_party_type: 'pstn',
    });
    if (outcome.how === 'hungup') end(row, effects, at, 'normal_clearing', '200', 'callee');
  }

  async function run(id: string, control: CallLoopControl) {
    let row = await store.read(id);
    while (row && !runtime.signal.aborted) {
      if (control.woken) {
        control.woken = false;
        row = await store.read(id);
        continue;
      }
      if (row.status === ENDED) return;
      if ((row.state as unknown as CallState).relay) {
        const effects = effectsOf(row);
        await relaySession(row, effects);
        if (runtime.signal.aborted) return;
        row = await commit(row, effects);
        continue;
      }
      const state = row.state as unknown as CallState;
      const commands = row.commands as unknown as QueuedCommand[];
      const pending = commands.find((queued) => queued.seq >= state.commandsTaken);
      const upcoming = [...state.agenda, ...timedEnds(row, state)].sort((a, b) => a.atMs - b.atMs)[0];
      const effects = effectsOf(row);
      /** Takes the upcoming event (the agenda's first, unless it is one of the timed ends). */
      const takeUpcoming = () => {
        const first = effects.state.agenda[0];
        if (first && first.atMs === upcoming!.atMs && first.item.kind === upcoming!.item.kind)
          effects.state.agenda.shift();
        take(row!, effects, upcoming!.atMs, upcoming!.item);
        effects.state.clockMs = Math.max(effects.state.clockMs, upcoming!.atMs);
      };
      if (pending) {
        const at = Math.max(state.clockMs, (pending.at - row.createdAt.getTime()) / timeScale);
        // What was due before the command came happens first.
        if (upcoming && upcoming.atMs <= at) takeUpcoming();
        else {
          command(row, effects, at, pending);
          effects.state.clockMs = Math.max(effects.state.clockMs, at);
        }
        row = await commit(row, effects);
        continue;
      }
      if (!upcoming) return;
      const wait = row.createdAt.getTime() + upcoming.atMs * timeScale - Date.now();
      if (wait > 0) {
        await sleep(wait, AbortSignal.any([runtime.signal, control.signal()]));
        continue;
      }
      takeUpcoming();
      if (runtime.signal.aborted) return;
      row = await commit(row, effects);
    }
  }

  const start = (id: string) => runtime.start(id, (control) => run(id, control));
  /** A command was queued on the call: its loop reads its row again now. */
  function wake(id: string) {
    if (!runtime.wake(id)) start(id);
  }

  return {
    start,
    /** The REST API queued a command: the call's loop reads its row again now. */
    wake,
    /** A call was dialed with link_to and bridge_intent: the linked call's person waits for it. */
    async linked(linkedTo: string, dialed: string) {
      if (await tellCall(linkedTo, 'linked', dialed)) wake(linkedTo);
    },
    deliver,
    virtualNow,
    /** Picks up, after a restart, every call still on and every webhook not yet delivered. */
    async resume() {
      for (const callControlId of await store.live(ENDED)) start(callControlId);
      for (const { callControlId, account } of await store.owing()) deliver(callControlId, account);
    },
    close: () => runtime.close(),
  };
}

export type CallRunner = ReturnType<typeof createCallRunner>;
