import { randomUUID } from 'node:crypto';
import type { JsonHttp } from '../../lib/http/json-http';
import { sleep, type RetryBackoff } from '../../lib/http/post-until-answered';
import { createTwinRuntime, type CallLoopControl } from '../twin-common/runtime';
import { personaAnswer, relayPersonaAnswer, type PersonaScript } from './persona';
import { relayConversation, type RelaySettings } from './relay';
import { simulatedTalkMs } from '../simulated-carrier/timeline';
import {
  TWIN_TIMES,
  connectedTalkMs,
  detection,
  dialPlan,
  dialedLeg,
  machineGreeting,
  speakingMs,
  type AnsweredBy,
  type TerminalStatus,
} from './plan';
import { twilioTwinCallStore, type CallPatch, type TwilioTwinCall } from './call-store';
import type { TwinSql } from '../twin-common/sql';
import { directionOf, rfc2822 } from './resource';
import { TWILIO_SIGNATURE_HEADER, twilioSignature } from './signature';
import { parseTwiml, TwimlError, type HttpMethod, type PromptVerb, type Verb } from './twiml';

/**
 * A call's life on the twin (docs/features/carriers/twins.md#the-twilio-twin), kept in its row so that a twin killed mid-call
 * goes on with it: the step due next and when, the TwiML being obeyed and where, detection, and the counters of its
 * callbacks. One loop per live call takes its steps in order; each step is written, with the callbacks it owes, in one
 * transaction before the next is taken, so a restart redoes at most the step in flight (a TwiML request may then be
 * made twice). Times are simulated ms from the dial; the twin multiplies them by its time scale.
 */

/** What the create asked for, as the twin keeps it (row.request). */
export interface CallRequest {
  url: string | null;
  method: HttpMethod;
  twiml: string | null;
  statusCallback: string | null;
  statusCallbackMethod: HttpMethod;
  /** Twilio's StatusCallbackEvent: initiated, ringing, answered, completed (none given: completed). */
  statusCallbackEvents: string[];
  timeoutSec: number;
  machineDetection: 'Enable' | 'DetectMessageEnd' | null;
  machineDetectionTimeoutSec: number;
  asyncAmd: boolean;
  asyncAmdStatusCallback: string | null;
  asyncAmdStatusCallbackMethod: HttpMethod;
  timeLimitSec: number;
  /**
   * inbound: a person called one of the account's numbers (POST /control/incoming-calls): the TwiML is the number's
   * VoiceUrl, the person is the From. Absent: outbound-api, a call the REST API created.
   */
  direction?: 'inbound';
}

/** The number of the person on the call (who answers an outbound call, who called in): personas play it. */
export const personNumber = (row: TwilioTwinCall) =>
  (row.request as unknown as CallRequest).direction === 'inbound' ? row.from : row.to;

export interface LogEntry {
  /** Simulated ms from the dial. */
  atMs: number;
  /** agent: what the TwiML made the twin say or do; callee: what the person or machine said; twin: what happened. */
  speaker: 'agent' | 'callee' | 'twin';
  kind:
    | 'say'
    | 'play'
    | 'pause'
    | 'speech'
    | 'silence'
    | 'greeting'
    | 'dial'
    | 'whisper'
    | 'bridge'
    | 'connect'
    | 'hangup'
    | 'redirect'
    | 'error'
    | 'unsupported';
  text?: string;
  voice?: string | null;
  language?: string | null;
  confidence?: number;
  url?: string;
  code?: number;
}

type Step =
  | { kind: 'ringing' }
  /** An inbound call: the twin takes it at once for the account, and asks the number's VoiceUrl what to do. */
  | { kind: 'pickup' }
  | { kind: 'answer' }
  | { kind: 'end'; status: TerminalStatus; sipResponseCode: number }
  /** Synchronous detection has finished: the call's TwiML is asked for, with AnsweredBy. */
  | { kind: 'detected' }
  | { kind: 'verb' }
  | { kind: 'fetch'; url: string; method: HttpMethod; params: Record<string, string> }
  | { kind: 'inline'; twiml: string }
  /** A <Dial>ed <Number url> answered: its TwiML is fetched and played to the called party, then the two are bridged. */
  | {
      kind: 'whisper';
      number: string;
      legSid: string;
      url: string;
      method: HttpMethod;
      action: { url: string; method: HttpMethod } | null;
    }
  /** <Connect><ConversationRelay>: the session on the application's socket, held to its end. */
  | {
      kind: 'relay';
      relay: RelaySettings;
      /** <Connect>'s action, asked what to do once the session ends (absent in calls stored before it). */
      action?: { url: string; method: HttpMethod } | null;
    };

export interface CallState {
  /** When the last step was taken: nothing the call does later can come before it. */
  clockMs: number;
  next: { atMs: number; step: Step } | null;
  answer: { atMs: number; by: 'human' | 'machine' } | null;
  amd: { atMs: number; answeredBy: AnsweredBy; durationMs: number; async: boolean; done: boolean } | null;
  program: { url: string | null; verbs: Verb[]; index: number } | null;
  /** Gathers heard so far: the persona answers them in turn. */
  gathers: number;
  /** The last thing said: the question of a Gather without a prompt of its own. */
  lastSaid: string | null;
  /** Twilio's SequenceNumber of the next status callback. */
  statusSeq: number;
  callbackSeq: number;
  redirectsApplied: number;
  /** TwiML documents fetched since the clock last moved: a redirect loop that never lets time pass is ended. */
  fetchesAtClock: number;
}

export interface Redirect {
  seq: number;
  url?: string;
  method?: HttpMethod;
  twiml?: string;
}

export interface Callback {
  url: string;
  method: HttpMethod;
  params: Record<string, string>;
}

const TERMINAL = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);
export const isEnded = (status: string) => TERMINAL.has(status);
const MAX_FETCHES_AT_CLOCK = 20;

export function initialState(request: CallRequest, to: string): CallState {
  const plan = dialPlan(to, request.timeoutSec);
  return {
    clockMs: 0,
    next:
      request.direction === 'inbound'
        ? { atMs: 0, step: { kind: 'pickup' } }
        : plan.ringingAtMs !== null
          ? { atMs: plan.ringingAtMs, step: { kind: 'ringing' } }
          : {
              atMs: plan.end!.atMs,
              step: { kind: 'end', status: plan.end!.status, sipResponseCode: plan.end!.sipResponseCode },
            },
    answer: null,
    amd: null,
    program: null,
    gathers: 0,
    lastSaid: null,
    statusSeq: 0,
    callbackSeq: 0,
    redirectsApplied: 0,
    fetchesAtClock: 0,
  };
}

export interface CallRunnerOptions {
  sql: TwinSql;
  http: JsonHttp;
  timeScale: number;
  /** The auth token of an account: what its callbacks and TwiML requests are signed with. */
  authTokenOf: (accountSid: string) => string | undefined;
  /** 'until-answered': each callback is retried with backoff until answered 2xx; 'once': one attempt, as Twilio's default. */
  callbackDelivery: 'until-answered' | 'once';
  retry: RetryBackoff;
  /** How long the twin waits for a TwiML document (Twilio: 15 s). */
  fetchTimeoutMs?: number;
  /** The recording status callbacks a call's end owes (recordings.ts), at the call's clock at its end. */
  recordingCallbacksAtEnd?: (row: TwilioTwinCall, endMs: number) => Promise<Callback[]>;
}

/** The call's parameters, as Twilio sends them with every request about it. */
function callParams(row: TwilioTwinCall, callStatus: string): Record<string, string> {
  return {
    AccountSid: row.accountSid,
    ApiVersion: '2010-04-01',
    CallSid: row.sid,
    CallStatus: callStatus,
    Called: row.to,
    Caller: row.from,
    Direction: directionOf(row.request),
    From: row.from,
    To: row.to,
  };
}

/** A Call SID for a <Dial>ed leg: CA and 32 hex digits derived from its parent's, so a replayed step names it alike. */
const legSid = (parent: string, index: number) =>
  `CA${(parent.slice(2, 30) + index.toString(16).padStart(4, '0')).slice(0, 32)}`;

export function createCallRunner(options: CallRunnerOptions) {
  const { sql, http, timeScale } = options;
  const store = twilioTwinCallStore(sql);
  const runtime = createTwinRuntime({
    name: 'twilio twin',
    retry: options.retry,
    delivery: options.callbackDelivery,
  });
  const stopping = { signal: runtime.signal };

  const wallAt = (row: TwilioTwinCall, atMs: number) => new Date(row.createdAt.getTime() + atMs * timeScale);
  const virtualNow = (row: TwilioTwinCall) => (Date.now() - row.createdAt.getTime()) / timeScale;

  /** Sends one callback or TwiML request, signed with the account's auth token; answers the status and text. */
  async function send(
    accountSid: string,
    request: Callback,
    extraHeaders: Record<string, string>,
    signal: AbortSignal,
  ) {
    const token = options.authTokenOf(accountSid) ?? '';
    let url = request.url;
    let body: string | undefined;
    if (request.method === 'GET') {
      const target = new URL(url);
      for (const [name, value] of Object.entries(request.params)) target.searchParams.append(name, value);
      url = target.toString();
    } else body = new URLSearchParams(request.params).toString();
    const signature = twilioSignature(token, url, request.method === 'GET' ? {} : request.params);
    return http.request(request.method, url, {
      rawBody: body,
      contentType: 'application/x-www-form-urlencoded',
      headers: { [TWILIO_SIGNATURE_HEADER]: signature, 'User-Agent': 'TwilioProxy/1.1', ...extraHeaders },
      signal,
    });
  }

  // ---- Callbacks: delivered in order per call, at least once (or once, as Twilio's default).

  function deliver(sid: string, accountSid: string) {
    runtime.deliver(sid, {
      owed: () => store.owed(sid),
      send: async (callback, _attempt, signal) => {
        const response = await send(
          accountSid,
          {
            url: callback.url,
            method: callback.method as HttpMethod,
            params: callback.params,
          },
          // Twilio's header for recognising a webhook sent again: the same for every attempt of one callback.
          { 'I-Twilio-Idempotency-Token': `${sid}-${callback.seq}` },
          signal,
        );
        return response.status >= 200 && response.status <= 299;
      },
      delivered: (callback) => store.delivered(sid, callback.seq),
    });
  }

  // ---- Steps.

  interface Effects {
    state: CallState;
    data: CallPatch;
    log: LogEntry[];
    callbacks: Callback[];
  }

  function statusCallback(
    row: TwilioTwinCall,
    effects: Effects,
    event: string,
    callStatus: string,
    atMs: number,
    extra: Record<string, string> = {},
  ) {
    const request = row.request as unknown as CallRequest;
    if (!request.statusCallback || !request.statusCallbackEvents.includes(event)) return;
    const answeredBy = effects.data.answeredBy ?? row.answeredBy;
    effects.callbacks.push({
      url: request.statusCallback,
      method: request.statusCallbackMethod,
      params: {
        ...callParams(row, callStatus),
        CallbackSource: 'call-progress-events',
        SequenceNumber: String(effects.state.statusSeq++),
        Timestamp: rfc2822(wallAt(row, atMs)),
        ...(answeredBy && { AnsweredBy: answeredBy }),
        ...extra,
      },
    });
  }

  function end(row: TwilioTwinCall, effects: Effects, atMs: number, status: TerminalStatus, sipResponseCode: number) {
    const { state } = effects;
    const durationSec = state.answer ? Math.ceil((atMs - state.answer.atMs) / 1_000) : null;
    state.next = null;
    state.clockMs = atMs;
    Object.assign(effects.data, { status, endTime: wallAt(row, atMs), durationSec });
    statusCallback(row, effects, 'completed', status, atMs, {
      CallDuration: String(durationSec ?? 0),
      // Twilio's Duration is the call's billed minutes.
      Duration: String(Math.ceil((durationSec ?? 0) / 60)),
      SipResponseCode: String(sipResponseCode),
    });
  }

  /** The TwiML the call is to obey now: the newest redirect's, else what the create gave. */
  function documentStep(row: TwilioTwinCall, state: CallState): Step {
    const redirect = row.redirect as Redirect | null;
    const request = row.request as unknown as CallRequest;
    if (redirect) {
      state.redirectsApplied = Math.max(state.redirectsApplied, redirect.seq);
      return redirect.twiml !== undefined
        ? { kind: 'inline', twiml: redirect.twiml }
        : { kind: 'fetch', url: redirect.url!, method: redirect.method ?? 'POST', params: {} };
    }
    return request.twiml !== null
      ? { kind: 'inline', twiml: request.twiml }
      : { kind: 'fetch', url: request.url!, method: request.method, params: {} };
  }

  function prompts(row: TwilioTwinCall, effects: Effects, verbs: PromptVerb[], atMs: number): number {
    let at = atMs;
    for (const verb of verbs) {
      if (verb.verb === 'Say') {
        effects.log.push({
          atMs: at,
          speaker: 'agent',
          kind: 'say',
          text: verb.text,
          voice: verb.voice,
          language: verb.language,
        });
        effects.state.lastSaid = verb.text;
        at += speakingMs(verb.text) * verb.loop;
      } else if (verb.verb === 'Play') {
        effects.log.push({ atMs: at, speaker: 'agent', kind: 'play', url: verb.url });
        at += TWIN_TIMES.playMs * verb.loop;
      } else {
        effects.log.push({ atMs: at, speaker: 'agent', kind: 'pause' });
        at += verb.lengthSec * 1_000;
      }
    }
    return at;
  }

  /** The program's next verb, at atMs. */
  function runVerb(row: TwilioTwinCall, effects: Effects, atMs: number) {
    const { state } = effects;
    const program = state.program!;
    const verb = program.verbs[program.index];
    const next = (at: number, step: Step = { kind: 'verb' }) => {
      program.index += 1;
      state.next = { atMs: at, step };
    };
    if (!verb) return end(row, effects, atMs, 'completed', 200); // the document ended: Twilio hangs up
    switch (verb.verb) {
      case 'Say':
      case 'Play':
      case 'Pause':
        return next(prompts(row, effects, [verb], atMs));
      case 'Gather': {
        const question =
          verb.prompts
            .filter((prompt) => prompt.verb === 'Say')
            .map((prompt) => prompt.text)
            .join(' ') ||
          state.lastSaid ||
          '';
        const asked = prompts(row, effects, verb.prompts, atMs);
        const listens = verb.input.includes('speech') && state.answer?.by === 'human';
        const heard = listens
          ? personaAnswer(personNumber(row), row.persona as PersonaScript | null, state.gathers, question, verb.hints)
          : null;
        state.gathers += 1;
        const action = verb.action ?? program.url;
        if (heard) {
          const speaksAt = asked + TWIN_TIMES.answerDelayMs;
          effects.log.push({
            atMs: speaksAt,
            speaker: 'callee',
            kind: 'speech',
            text: heard.speech,
            confidence: heard.confidence,
            language: verb.language,
          });
          const done =
            speaksAt +
            speakingMs(heard.speech) +
            (verb.speechTimeout === 'auto' ? TWIN_TIMES.autoSpeechTimeoutMs : verb.speechTimeout * 1_000);
          if (action)
            return next(done, {
              kind: 'fetch',
              url: action,
              method: verb.method,
              params: { SpeechResult: heard.speech, Confidence: heard.confidence.toFixed(8) },
            });
          return next(done);
        }
        effects.log.push({ atMs: asked, speaker: 'callee', kind: 'silence' });
        const timedOut = asked + verb.timeoutSec * 1_000;
        // No input: Twilio goes on to the verb after the Gather, unless actionOnEmptyResult asks for the action.
        if (verb.actionOnEmptyResult && action)
          return next(timedOut, { kind: 'fetch', url: action, method: verb.method, params: {} });
        return next(timedOut);
      }
      case 'Redirect':
        return next(atMs, { kind: 'fetch', url: verb.url, method: verb.method, params: {} });
      case 'Hangup':
        effects.log.push({ atMs, speaker: 'agent', kind: 'hangup' });
        return end(row, effects, atMs, 'completed', 200);
      case 'Dial': {
        const leg = dialedLeg(verb.number, verb.timeoutSec);
        effects.log.push({ atMs, speaker: 'agent', kind: 'dial', text: verb.number });
        const answer = dialPlan(verb.number, verb.timeoutSec).answer;
        // <Number url>: once the called party answers, its TwiML plays to them alone, then the two are bridged.
        if (verb.whisper && answer)
          return next(atMs + answer.atMs, {
            kind: 'whisper',
            number: verb.number,
            legSid: legSid(row.sid, program.index),
            url: verb.whisper.url,
            method: verb.whisper.method,
            action: verb.action ? { url: verb.action, method: verb.method } : null,
          });
        if (answer) effects.log.push({ atMs: atMs + answer.atMs, speaker: 'twin', kind: 'bridge', text: verb.number });
        effects.log.push({
          atMs: atMs + leg.tookMs,
          speaker: 'twin',
          kind: 'dial',
          text: `${verb.number}: ${leg.status}`,
        });
        const done = atMs + leg.tookMs;
        if (verb.action)
          return next(done, {
            kind: 'fetch',
            url: verb.action,
            method: verb.method,
            params: {
              DialCallStatus: leg.status,
              DialCallSid: legSid(row.sid, program.index),
              DialCallDuration: String(leg.talkSec),
            },
          });
        return next(done);
      }
      case 'Connect': {
        if (verb.relay && state.answer?.by === 'human') {
          effects.log.push({ atMs, speaker: 'agent', kind: 'connect', text: verb.noun });
          return next(atMs, {
            kind: 'relay',
            relay: verb.relay,
            action: verb.action ? { url: verb.action, method: verb.method } : null,
          });
        }
        // The twin opens no media stream: the callee talks as long as an answered call to the number lasts, then hangs up.
        effects.log.push({ atMs, speaker: 'agent', kind: 'connect', text: verb.noun });
        state.program!.index = program.verbs.length;
        // The callee hangs up when its talk is over; meanwhile an asynchronous detection still reports, and a redirect
        // (a machine's voicemail step) still takes the call over.
        return next(atMs + connectedTalkMs(personNumber(row)), {
          kind: 'end',
          status: 'completed',
          sipResponseCode: 200,
        });
      }
      case 'Unsupported':
        effects.log.push({ atMs, speaker: 'twin', kind: 'unsupported', text: verb.name });
        return next(atMs);
    }
  }

  /** Fetches a TwiML document (Url, Redirect, a Gather's or Dial's action) and makes it the call's program. */
  async function fetchDocument(
    row: TwilioTwinCall,
    effects: Effects,
    atMs: number,
    step: Extract<Step, { kind: 'fetch' | 'inline' }>,
  ) {
    const { state } = effects;
    state.fetchesAtClock = state.clockMs === atMs ? state.fetchesAtClock + 1 : 1;
    if (state.fetchesAtClock > MAX_FETCHES_AT_CLOCK) {
      effects.log.push({
        atMs,
        speaker: 'twin',
        kind: 'error',
        code: 11200,
        text: 'TwiML redirected again and again without any time passing',
      });
      return end(row, effects, atMs, 'completed', 200);
    }
    let document: string;
    let url: string | null = null;
    if (step.kind === 'inline') document = step.twiml;
    else {
      url = step.url;
      const answeredBy = effects.data.answeredBy ?? row.answeredBy;
      const amd = state.amd;
      const params = {
        ...callParams(row, 'in-progress'),
        // Synchronous detection tells the TwiML request who answered; asynchronous detection tells its own callback.
        ...(amd && !amd.async && answeredBy && { AnsweredBy: answeredBy }),
        ...step.params,
      };
      try {
        const response = await send(
          row.accountSid,
          { url, method: step.method, params },
          {},
          AbortSignal.any([stopping.signal, AbortSignal.timeout(options.fetchTimeoutMs ?? 15_000)]),
        );
        if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
        document = response.text;
      } catch (error) {
        if (stopping.signal.aborted) throw error;
        // Twilio: error 11200, "An application error has occurred", and the call ends.
        effects.log.push({
          atMs,
          speaker: 'twin',
          kind: 'error',
          code: 11200,
          url,
          text: `HTTP retrieval failure: ${(error as Error).message}`,
        });
        return end(row, effects, atMs, 'completed', 200);
      }
    }
    try {
      state.program = { url, verbs: parseTwiml(document, url), index: 0 };
    } catch (error) {
      const code = error instanceof TwimlError ? error.code : 12100;
      effects.log.push({
        atMs,
        speaker: 'twin',
        kind: 'error',
        code,
        url: url ?? undefined,
        text: (error as Error).message,
      });
      return end(row, effects, atMs, 'completed', 200);
    }
    state.next = { atMs, step: { kind: 'verb' } };
  }

  async function take(row: TwilioTwinCall, effects: Effects, atMs: number, step: Step) {
    const { state } = effects;
    const request = row.request as unknown as CallRequest;
    switch (step.kind) {
      case 'ringing': {
        effects.data.status = 'ringing';
        statusCallback(row, effects, 'ringing', 'ringing', atMs);
        const plan = dialPlan(row.to, request.timeoutSec);
        state.next = plan.answer
          ? { atMs: plan.answer.atMs, step: { kind: 'answer' } }
          : {
              atMs: plan.end!.atMs,
              step: { kind: 'end', status: plan.end!.status, sipResponseCode: plan.end!.sipResponseCode },
            };
        break;
      }
      case 'pickup':
        // The person is on the line from the start: a human, whom no detection is asked about.
        state.answer = { atMs, by: 'human' };
        effects.data.status = 'in-progress';
        state.next = { atMs, step: documentStep(row, state) };
        break;
      case 'answer': {
        const plan = dialPlan(row.to, request.timeoutSec);
        state.answer = { atMs, by: plan.answer!.by };
        effects.data.status = 'in-progress';
        statusCallback(row, effects, 'answered', 'in-progress', atMs);
        if (state.answer.by === 'machine')
          effects.log.push({ atMs, speaker: 'callee', kind: 'greeting', text: machineGreeting(row.to) });
        if (request.machineDetection) {
          const found = detection(
            row.to,
            state.answer.by,
            request.machineDetection,
            request.machineDetectionTimeoutSec,
            (row.persona as PersonaScript | null)?.answeredBy ?? null,
          );
          state.amd = { atMs: atMs + found.durationMs, ...found, async: request.asyncAmd, done: false };
          if (!request.asyncAmd) {
            state.next = { atMs: state.amd.atMs, step: { kind: 'detected' } };
            break;
          }
        }
        state.next = { atMs, step: documentStep(row, state) };
        break;
      }
      case 'detected':
        state.amd!.done = true;
        effects.data.answeredBy = state.amd!.answeredBy;
        state.next = { atMs, step: documentStep(row, state) };
        break;
      case 'end':
        end(row, effects, atMs, step.status, step.sipResponseCode);
        break;
      case 'verb':
        runVerb(row, effects, atMs);
        break;
      case 'fetch':
      case 'inline':
        await fetchDocument(row, effects, atMs, step);
        break;
      case 'relay':
        await relaySession(row, effects, atMs, step.relay, step.action ?? null);
        break;
      case 'whisper':
        await whisper(row, effects, atMs, step);
        break;
    }
  }

  /**
   * A <Number url> answered (https://www.twilio.com/docs/voice/twiml/number#attributes-url): its TwiML is requested
   * as the called party's leg (CallSid the leg's, ParentCallSid the caller's), its <Say>, <Play> and <Pause> played to
   * the called party alone, then the two are bridged and talk as long as an answered call to the number lasts; the
   * <Dial>'s action then has DialCallStatus completed. A document that cannot be fetched or read, or a <Hangup> in
   * it, hangs the called party up unbridged (still completed: the leg was answered). Other verbs are skipped.
   */
  async function whisper(
    row: TwilioTwinCall,
    effects: Effects,
    atMs: number,
    step: Extract<Step, { kind: 'whisper' }>,
  ) {
    let at = atMs;
    let bridged = true;
    try {
      const response = await send(
        row.accountSid,
        {
          url: step.url,
          method: step.method,
          params: {
            AccountSid: row.accountSid,
            CallSid: step.legSid,
            ParentCallSid: row.sid,
            From: row.from,
            To: step.number,
            CallStatus: 'in-progress',
            Direction: 'outbound-dial',
          },
        },
        {},
        AbortSignal.any([stopping.signal, AbortSignal.timeout(options.fetchTimeoutMs ?? 15_000)]),
      );
      if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
      for (const verb of parseTwiml(response.text, step.url)) {
        if (verb.verb === 'Hangup') {
          bridged = false;
          break;
        }
        if (verb.verb === 'Say') {
          effects.log.push({ atMs: at, speaker: 'agent', kind: 'whisper', text: verb.text, voice: verb.voice });
          at += speakingMs(verb.text) * verb.loop;
        } else if (verb.verb === 'Play') at += TWIN_TIMES.playMs * verb.loop;
        else if (verb.verb === 'Pause') at += verb.lengthSec * 1_000;
        else effects.log.push({ atMs: at, speaker: 'twin', kind: 'unsupported', text: verb.verb });
      }
    } catch (error) {
      if (stopping.signal.aborted) throw error;
      effects.log.push({ atMs: at, speaker: 'twin', kind: 'error', code: 11200, url: step.url, text: String(error) });
      bridged = false;
    }
    const talkMs = bridged ? simulatedTalkMs(step.number) : 0;
    if (bridged) effects.log.push({ atMs: at, speaker: 'twin', kind: 'bridge', text: step.number });
    const done = at + talkMs;
    effects.log.push({ atMs: done, speaker: 'twin', kind: 'dial', text: `${step.number}: completed` });
    const params = {
      DialCallStatus: 'completed',
      DialCallSid: step.legSid,
      DialCallDuration: String(Math.round((done - atMs) / 1_000)),
    };
    effects.state.next = step.action
      ? { atMs: done, step: { kind: 'fetch', url: step.action.url, method: step.action.method, params } }
      : { atMs: done, step: { kind: 'verb' } };
  }

  /**
   * A ConversationRelay session (docs/features/conversation/relay.md#the-twin), held to its end within the step: the
   * agent's turns are said, the persona's answers heard. After `end`, or the application's close, the document goes on
   * after <Connect> (its end: Twilio hangs up). After the twin cut the socket the line stays open, silent, for as long
   * as an answered call to the number lasts, unless the application hangs up first. A refused handshake is Twilio's
   * error 64102, and the document goes on.
   */
  async function relaySession(
    row: TwilioTwinCall,
    effects: Effects,
    atMs: number,
    relay: RelaySettings,
    action: { url: string; method: HttpMethod } | null,
  ) {
    const { state } = effects;
    const persona = row.persona as PersonaScript | null;
    const request = row.request as unknown as CallRequest;
    const outcome = await relayConversation({
      settings: relay,
      headers: {
        [TWILIO_SIGNATURE_HEADER]: twilioSignature(options.authTokenOf(row.accountSid) ?? '', relay.url),
        'User-Agent': 'Twilio',
      },
      sessionId: `VX${randomUUID().replaceAll('-', '')}`,
      setup: {
        accountSid: row.accountSid,
        callSid: row.sid,
        from: row.from,
        to: row.to,
        direction: directionOf(request),
        callType: 'PSTN',
        callStatus: 'IN-PROGRESS',
      },
      answer: (index, said) => relayPersonaAnswer(personNumber(row), persona, index, said, relay.hints),
      dropsAt: persona?.relayDropsAt ?? null,
      interruptsAt: persona?.relayInterruptsAt ?? null,
      hangsUpAt: persona?.relayHangsUpAt ?? null,
      atMs,
      timeScale,
      signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(request.timeLimitSec * 1_000 * timeScale)]),
    });
    for (const line of outcome.lines)
      effects.log.push(
        line.speaker === 'agent'
          ? {
              atMs: line.atMs,
              speaker: 'agent',
              kind: 'say',
              text: line.text,
              voice: relay.voice,
              language: relay.language,
            }
          : {
              atMs: line.atMs,
              speaker: 'callee',
              kind: 'speech',
              text: line.text,
              confidence: line.confidence,
              language: relay.language,
            },
      );
    const at = outcome.endedAtMs;
    // The session took its simulated time: nothing of the call comes before its end (a hang-up asked meanwhile).
    state.clockMs = Math.max(state.clockMs, at);
    if (outcome.how === 'refused')
      effects.log.push({
        atMs: at,
        speaker: 'twin',
        kind: 'error',
        code: 64102,
        url: relay.url,
        text: `ConversationRelay: unable to connect to the websocket URL (HTTP ${outcome.status ?? 'none'})`,
      });
    if (outcome.how === 'hungup') {
      effects.log.push({ atMs: at, speaker: 'callee', kind: 'hangup' });
      return end(row, effects, at, 'completed', 200);
    }
    if (outcome.how === 'dropped') {
      effects.log.push({ atMs: at, speaker: 'twin', kind: 'connect', text: 'ConversationRelay socket dropped' });
      state.program!.index = state.program!.verbs.length;
      state.next = { atMs: at + connectedTalkMs(personNumber(row)), step: { kind: 'verb' } };
      return;
    }
    // <Connect action>: Twilio asks the action what to do after the session (ended: the application sent `end`;
    // completed: the socket closed without one; failed: the handshake was refused), with the end's handoffData.
    if (action) {
      const sessionStatus = outcome.how === 'end' ? 'ended' : outcome.how === 'refused' ? 'failed' : 'completed';
      state.next = {
        atMs: at,
        step: {
          kind: 'fetch',
          url: action.url,
          method: action.method,
          params: {
            SessionId: outcome.sessionId,
            SessionStatus: sessionStatus,
            SessionDuration: String(Math.max(0, Math.round((at - atMs) / 1_000))),
            ...(outcome.handoffData !== undefined && { HandoffData: outcome.handoffData }),
          },
        },
      };
      return;
    }
    state.next = { atMs: at, step: { kind: 'verb' } };
  }

  /** Asynchronous detection's result: AnsweredBy on the call, and POSTed to AsyncAmdStatusCallback. */
  function asyncDetected(row: TwilioTwinCall, effects: Effects) {
    const amd = effects.state.amd!;
    const request = row.request as unknown as CallRequest;
    amd.done = true;
    effects.data.answeredBy = amd.answeredBy;
    if (request.asyncAmdStatusCallback)
      effects.callbacks.push({
        url: request.asyncAmdStatusCallback,
        method: request.asyncAmdStatusCallbackMethod,
        params: {
          AccountSid: row.accountSid,
          AnsweredBy: amd.answeredBy,
          CallSid: row.sid,
          MachineDetectionDuration: String(amd.durationMs),
        },
      });
  }

  /** Commits a step: the row's new state, its log, and the callbacks it owes, in one transaction. */
  async function commit(row: TwilioTwinCall, effects: Effects): Promise<TwilioTwinCall> {
    const { state } = effects;
    // The call's recordings finish with it: their callbacks are owed by the step that ends it, after its own.
    if (
      options.recordingCallbacksAtEnd &&
      effects.data.status !== undefined &&
      isEnded(effects.data.status) &&
      !isEnded(row.status)
    )
      effects.callbacks.push(...(await options.recordingCallbacksAtEnd(row, state.clockMs)));
    let log = [...(row.log as unknown as LogEntry[]), ...effects.log];
    // A call cut short says nothing after its end.
    if (!state.next) log = log.filter((entry) => entry.atMs <= state.clockMs);
    log.sort((a, b) => a.atMs - b.atMs);
    const first = state.callbackSeq;
    state.callbackSeq += effects.callbacks.length;
    const updated = await store.commit(row.sid, {
      patch: effects.data,
      state,
      log,
      callbacks: effects.callbacks.map((callback, index) => ({
        seq: first + index,
        url: callback.url,
        method: callback.method,
        params: callback.params,
      })),
    });
    if (effects.callbacks.length > 0) deliver(row.sid, row.accountSid);
    return updated;
  }

  const effectsOf = (row: TwilioTwinCall): Effects => ({
    state: structuredClone(row.state as unknown as CallState),
    data: {},
    log: [],
    callbacks: [],
  });

  /** A hangup or redirect asked by the REST API since the call's last step, applied before anything else. */
  function command(row: TwilioTwinCall): Effects | null {
    if (isEnded(row.status)) return null;
    const effects = effectsOf(row);
    const { state } = effects;
    const now = Math.max(state.clockMs, virtualNow(row));
    if (row.hangupRequestedAt) {
      const at = Math.max(state.clockMs, (row.hangupRequestedAt.getTime() - row.createdAt.getTime()) / timeScale);
      end(row, effects, at, state.answer ? 'completed' : 'canceled', state.answer ? 200 : 487);
      return effects;
    }
    const redirect = row.redirect as Redirect | null;
    if (redirect && redirect.seq > state.redirectsApplied && state.answer) {
      effects.log.push({ atMs: now, speaker: 'twin', kind: 'redirect', url: redirect.url });
      // A redirect replaces what the call was doing (a Gather still listening is abandoned).
      state.next = { atMs: now, step: documentStep(row, state) };
      state.clockMs = now;
      return effects;
    }
    return null;
  }

  async function run(sid: string, control: CallLoopControl) {
    let row = await store.read(sid);
    while (row && !stopping.signal.aborted) {
      if (control.woken) {
        control.woken = false;
        row = await store.read(sid);
        continue;
      }
      const commanded = command(row);
      if (commanded) {
        row = await commit(row, commanded);
        continue;
      }
      const state = row.state as unknown as CallState;
      const request = row.request as unknown as CallRequest;
      const pendingAmd =
        state.amd && state.amd.async && !state.amd.done && !isEnded(row.status) ? state.amd.atMs : null;
      if (!state.next && pendingAmd === null) return;
      const atMs = Math.min(state.next?.atMs ?? Infinity, pendingAmd ?? Infinity);
      const wait = row.createdAt.getTime() + atMs * timeScale - Date.now();
      if (wait > 0) {
        await sleep(wait, AbortSignal.any([stopping.signal, control.signal()]));
        continue;
      }
      const effects = effectsOf(row);
      const limitMs = state.answer ? state.answer.atMs + request.timeLimitSec * 1_000 : Infinity;
      if (atMs > limitMs) end(row, effects, limitMs, 'completed', 200);
      else if (pendingAmd !== null && pendingAmd <= (state.next?.atMs ?? Infinity)) asyncDetected(row, effects);
      else {
        const { step } = state.next!;
        await take(row, effects, atMs, step);
        effects.state.clockMs = Math.max(effects.state.clockMs, atMs);
      }
      if (stopping.signal.aborted) return;
      row = await commit(row, effects);
    }
  }

  const start = (sid: string) => runtime.start(sid, (control) => run(sid, control));

  return {
    start,
    /** The REST API changed the call's row (a hangup, a redirect): its loop reads it again now. */
    wake(sid: string) {
      if (!runtime.wake(sid)) start(sid);
    },
    deliver,
    /** Picks up, after a restart, every call still on and every callback not yet delivered. */
    async resume() {
      for (const sid of await store.live([...TERMINAL])) start(sid);
      for (const { callSid, accountSid } of await store.owing()) deliver(callSid, accountSid);
    },
    close: () => runtime.close(),
  };
}

export type CallRunner = ReturnType<typeof createCallRunner>;
