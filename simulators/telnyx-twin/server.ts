import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import { addTwinControlRoutes, E164 } from '../twin-common/control-routes';
import express, { type NextFunction, type Request, type Response } from 'express';
import { isUniqueViolation, type TwinSql } from '../twin-common/sql';
import { ensureTelnyxTwinTables, telnyxTwinCallStore, type TelnyxTwinCall } from './call-store';
import { createJsonHttp } from '../../lib/http/json-http';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import type { RetryBackoff } from '../../lib/http/post-until-answered';
import { personaOf, type PersonaScript } from '../twilio-twin/persona';
import {
  AMD_MODES,
  createCallRunner,
  initialState,
  personNumber as personNumberOf,
  type CallState,
  type DialRequest,
  type LogEntry,
  type QueuedCommand,
} from './calls';
import type { TelnyxTwinAccount } from './config';
import { TELNYX_ERRORS, TelnyxApiError } from './errors';
import { eventOf } from './events';
import { signingKey } from './signature';
import { SsmlError, spokenTextOf } from '../twin-common/ssml';
import { addIncomingNumberRoutes, ensureApplications } from './incoming-numbers';
import { createTelnyxTwinRecordings } from './recordings';
import { assertFilePlays, fetchPlaybackAudio, readPlaybackStart } from './playback';

/**
 * The Telnyx twin (docs/features/carriers/twins.md#the-telnyx-twin): a local server that speaks Telnyx's Call Control (API
 * v2: JSON, `Authorization: Bearer <API key>`, Telnyx's error bodies, Ed25519-signed webhooks), so that the official
 * `telnyx` package dials on it with only its baseURL and API key changed. The calls themselves run in calls.ts; TEST
 * CONTROL routes (not Telnyx's) under /control.
 */
export interface TelnyxTwinOptions {
  /** Runs its SQL on the database its own schema (`telnyx_twin`, call-store.ts) is made in at listen. */
  sql: TwinSql;
  accounts: readonly TelnyxTwinAccount[];
  /** 1: real time; 0.001: a 40 s call lasts 40 ms. */
  timeScale: number;
  /** 'until-answered' (default): webhooks retried with backoff until answered 2xx; 'once': one attempt each. */
  webhookDelivery?: 'until-answered' | 'once';
  retry?: RetryBackoff;
  /** The espeak-ng program that speaks a recording's lines (twin-common/spoken-audio.ts); default: on the PATH. */
  espeakPath?: string;
}

export interface TelnyxTwin {
  /** Answers the base URL to give the SDK (`http://host:port/v2`). */
  listen(port: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const isHttpUrl = (value: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

type Body = Record<string, unknown>;

/** Reads the body's string members in Telnyx's order of faults; a wrong type is 422 10026. */
function text(body: Body, name: string, required = false): string | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') {
    if (required) throw TELNYX_ERRORS.missing(name);
    return undefined;
  }
  if (typeof value !== 'string') throw TELNYX_ERRORS.invalid(name, `The '${name}' parameter must be of type 'string'`);
  return value;
}
/**
 * What a speak says: its `payload`, as text or, with `payload_type` `ssml`, read as the SSML of Telnyx's Polly voices
 * (the words with a `<sub alias>` said as its alias: simulators/twin-common/ssml.ts); malformed SSML is refused.
 */
function spokenPayload(body: Body): string {
  const payload = text(body, 'payload', true)!;
  const type = text(body, 'payload_type') ?? 'text';
  if (type === 'text') return payload;
  if (type !== 'ssml') throw TELNYX_ERRORS.enumerated('payload_type', ['text', 'ssml']);
  try {
    return spokenTextOf(payload);
  } catch (error) {
    if (error instanceof SsmlError) throw TELNYX_ERRORS.invalid('payload', error.message);
    throw error;
  }
}
function integer(body: Body, name: string, fallback: number, min: number, max: number): number {
  const value = body[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw TELNYX_ERRORS.invalid(name, `The '${name}' parameter must be of type 'integer'`);
  if (value < min || value > max) throw TELNYX_ERRORS.range(name, min, max);
  return value;
}
function clientStateOf(body: Body): string | null {
  const value = text(body, 'client_state');
  if (value !== undefined && !BASE64.test(value))
    throw TELNYX_ERRORS.invalid('client_state', 'client_state must be a valid Base-64 encoded string.');
  return value ?? null;
}

/** The Call resource (components.schemas.Call): what retrieve and dial answer. */
function callResource(row: TelnyxTwinCall) {
  const alive = row.status !== 'hangup';
  return {
    call_control_id: row.callControlId,
    call_leg_id: row.callLegId,
    call_session_id: row.callSessionId,
    ...(row.clientState && { client_state: row.clientState }),
    is_alive: alive,
    record_type: 'call' as const,
    start_time: row.createdAt.toISOString(),
    ...(!alive && row.endTime && { end_time: row.endTime.toISOString() }),
    ...(row.durationSec !== null && { call_duration: row.durationSec }),
  };
}

export function createTelnyxTwin(options: TelnyxTwinOptions): TelnyxTwin {
  const { sql } = options;
  const store = telnyxTwinCallStore(sql);
  const keys = new Map(options.accounts.map((account) => [account.id, signingKey(account.signingKey)]));
  const http = createJsonHttp({ sockets: 64 });
  /** The twin's own address (http://host:port), once it listens: its recordings' download URLs point at it. */
  let listeningUrl = '';
  const recordings = createTelnyxTwinRecordings({
    sql,
    timeScale: options.timeScale,
    baseUrl: () => listeningUrl,
    espeakPath: options.espeakPath,
  });
  const runner = createCallRunner({
    sql,
    http,
    timeScale: options.timeScale,
    signingKeyOf: (account) => keys.get(account),
    delivery: options.webhookDelivery ?? 'until-answered',
    retry: options.retry ?? { firstMs: 500, maxMs: 30_000 },
    recordingUrls: recordings.downloadUrls,
  });
  /** TEST CONTROL: the scripted persona of each number (in memory; a call keeps the script it was dialed with). */
  const personas = new Map<string, PersonaScript>();

  const app = express();
  app.disable('x-powered-by');
  app.use('/v2', express.json({ limit: '1mb', type: () => true }));
  app.use('/control', express.json({ limit: '1mb' }));

  const route =
    (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
      handler(req, res).catch(next);
    };
  const fail = (res: Response, error: TelnyxApiError) => res.status(error.status).json(error.body);
  const accountOf = (res: Response) => res.locals.account as TelnyxTwinAccount;

  /** `Authorization: Bearer <API key>`: the account the key belongs to. */
  app.use('/v2', (req, res, next) => {
    const [scheme, key] = (req.headers.authorization ?? '').split(' ');
    const account =
      scheme?.toLowerCase() === 'bearer' && key
        ? options.accounts.find((candidate) => candidate.apiKeys.some((known) => same(known, key)))
        : undefined;
    if (!account) return fail(res, TELNYX_ERRORS.authentication());
    res.locals.account = account;
    next();
  });

  /** The call of the path, of the key's account. */
  async function callOf(req: Request, res: Response): Promise<TelnyxTwinCall> {
    const id = String(req.params.id);
    const row = await store.read(id);
    if (!row || row.account !== accountOf(res).id) throw TELNYX_ERRORS.notFound(`Call ${id}`);
    return row;
  }

  app.post(
    '/v2/calls',
    route(async (req, res) => {
      const account = accountOf(res);
      const body = (req.body ?? {}) as Body;
      const connectionId = text(body, 'connection_id', true)!;
      const to = text(body, 'to', true)!;
      const from = text(body, 'from', true)!;
      if (!E164.test(to)) throw TELNYX_ERRORS.notE164('to');
      if (!E164.test(from)) throw TELNYX_ERRORS.notE164('from');
      const connection = account.connections.find((candidate) => candidate.id === connectionId);
      const webhookUrl = text(body, 'webhook_url') ?? connection?.webhookUrl;
      if (!connection || !webhookUrl) throw TELNYX_ERRORS.invalidConnection();
      if (!isHttpUrl(webhookUrl)) throw TELNYX_ERRORS.invalid('webhook_url', 'webhook_url must be a valid URL.');
      const method = text(body, 'webhook_url_method');
      if (method !== undefined && method !== 'POST')
        // Telnyx also takes GET; the twin delivers JSON bodies and so only POST.
        throw TELNYX_ERRORS.enumerated('webhook_url_method', ['POST']);
      const amd = text(body, 'answering_machine_detection') ?? 'disabled';
      if (!(AMD_MODES as readonly string[]).includes(amd))
        throw TELNYX_ERRORS.enumerated('answering_machine_detection', AMD_MODES);
      const amdConfig = (body.answering_machine_detection_config ?? {}) as Body;
      // link_to: the call whose session this one shares; with bridge_intent, `from` is the linked call's.
      const linkTo = text(body, 'link_to') ?? null;
      const bridgeIntent = body.bridge_intent === true;
      const linked = linkTo ? await store.read(linkTo) : null;
      if (linkTo && (!linked || linked.account !== account.id || linked.status === 'hangup'))
        throw TELNYX_ERRORS.invalid('link_to', 'link_to must be the call_control_id of an active call.');
      if (bridgeIntent && !linked) throw TELNYX_ERRORS.missing('link_to');
      const callerId = linked && bridgeIntent ? linked.from : from;
      const request: DialRequest = {
        webhookUrl,
        timeoutSecs: integer(body, 'timeout_secs', 30, 5, 600),
        timeLimitSecs: integer(body, 'time_limit_secs', 14_400, 30, 14_400),
        amd: amd as DialRequest['amd'],
        amdTotalAnalysisMs: integer(amdConfig, 'total_analysis_time_millis', 3_500, 500, 60_000),
        ...(linked && { linkTo: linked.callControlId, bridgeIntent }),
      };
      const clientState = clientStateOf(body);
      const commandId = text(body, 'command_id') ?? null;
      const now = new Date();
      const id = `v3:${randomBytes(30).toString('base64url')}`;
      const state: CallState = initialState(request, to);
      const initiated = eventOf('call.initiated', now, {
        call_control_id: id,
        call_leg_id: randomUUID(),
        call_session_id: linked?.callSessionId ?? randomUUID(),
        ...(clientState && { client_state: clientState }),
        connection_id: connectionId,
        direction: 'outgoing',
        from: callerId,
        start_time: now.toISOString(),
        state: 'bridging',
        to,
      });
      let row: TelnyxTwinCall;
      try {
        // The call.initiated webhook is owed from the start: it is written with the call, as its webhook 0.
        row = await store.create(
          {
            callControlId: id,
            callLegId: initiated.data.payload.call_leg_id,
            callSessionId: initiated.data.payload.call_session_id,
            account: account.id,
            connectionId,
            commandId,
            to,
            from: callerId,
            status: 'dialing',
            clientState,
            createdAt: now,
            request,
            persona: personaOf(personas, to),
            state,
          },
          { url: webhookUrl, method: 'POST', event: initiated },
        );
      } catch (error) {
        // A dial sent again with a command_id already used: Telnyx ignores it; the twin answers the call it placed.
        if (!isUniqueViolation(error)) throw error;
        row = (await store.byCommandId(account.id, commandId!))!;
        res.json({ data: { ...callResource(row), is_alive: false } });
        return;
      }
      if (linked && bridgeIntent) await runner.linked(linked.callControlId, id);
      // "For Dial command it will always be `false` (dialing is asynchronous)."
      res.json({ data: { ...callResource(row), is_alive: false } });
      runner.start(id);
      runner.deliver(id, account.id);
    }),
  );

  app.get(
    '/v2/calls/:id',
    route(async (req, res) => {
      res.json({ data: callResource(await callOf(req, res)) });
    }),
  );

  /** The commands: checked, then queued on the call's row unless their command_id was seen on the call. */
  const COMMANDS: Record<
    string,
    {
      needsAnswer: boolean;
      read: (body: Body) => QueuedCommand['params'];
      check?: (state: CallState, ahead: QueuedCommand[], params: QueuedCommand['params']) => void;
      /** What the command needs from elsewhere before it is queued (a playback's audio, fetched). */
      prepare?: (params: QueuedCommand['params']) => Promise<QueuedCommand['params']>;
    }
  > = {
    hangup: { needsAnswer: false, read: () => ({}) },
    // An incoming call, parked: the application takes it, and names where its webhooks go from now on.
    answer: {
      needsAnswer: false,
      read: (body) => {
        const webhookUrl = text(body, 'webhook_url');
        if (webhookUrl !== undefined && !isHttpUrl(webhookUrl))
          throw TELNYX_ERRORS.invalid('webhook_url', 'webhook_url must be a valid URL');
        const method = text(body, 'webhook_url_method');
        if (method !== undefined && method !== 'POST') throw TELNYX_ERRORS.enumerated('webhook_url_method', ['POST']);
        return { webhookUrl: webhookUrl ?? null };
      },
      check: (state) => {
        if (state.answer) throw TELNYX_ERRORS.invalid('call_control_id', 'The call has already been answered.');
      },
    },
    speak: {
      needsAnswer: true,
      read: (body) => ({
        payload: spokenPayload(body),
        voice: text(body, 'voice', true),
        language: text(body, 'language') ?? null,
      }),
    },
    gather_using_speak: {
      needsAnswer: true,
      read: (body) => {
        const minimum = integer(body, 'minimum_digits', 1, 1, 128);
        return {
          payload: spokenPayload(body),
          voice: text(body, 'voice', true),
          language: text(body, 'language') ?? null,
          timeoutMillis: integer(body, 'timeout_millis', 60_000, 1, 600_000),
          validDigits: text(body, 'valid_digits') ?? '0123456789#*',
          maximumDigits: Math.max(minimum, integer(body, 'maximum_digits', 128, 1, 128)),
        };
      },
    },
    transcription_start: {
      needsAnswer: true,
      read: (body) => {
        const config = (body.transcription_engine_config ?? {}) as Body;
        const hints = config.hints;
        if (hints !== undefined && (!Array.isArray(hints) || hints.some((hint) => typeof hint !== 'string')))
          throw TELNYX_ERRORS.invalid('transcription_engine_config/hints', 'hints must be an array of strings');
        const interim = config.interim_results;
        if (interim !== undefined && typeof interim !== 'boolean')
          throw TELNYX_ERRORS.invalid(
            'transcription_engine_config/interim_results',
            'interim_results must be a boolean',
          );
        return {
          hints: (hints as string[] | undefined) ?? [],
          language: text(config, 'language') ?? null,
          interimResults: interim === true,
        };
      },
      check: (state) => {
        if (state.transcription) throw TELNYX_ERRORS.transcribing();
      },
    },
    transcription_stop: { needsAnswer: true, read: () => ({}) },
    conversation_relay_start: {
      needsAnswer: true,
      read: (body) => {
        // The URL as `url`, `conversation_relay_url` or `conversation_relay_settings.url`, the first of them given.
        const settings = (body.conversation_relay_settings ?? {}) as Body;
        const url = text(body, 'url') ?? text(body, 'conversation_relay_url') ?? text(settings, 'url');
        if (!url) throw TELNYX_ERRORS.missing('url');
        if (!/^wss?:\/\//.test(url)) throw TELNYX_ERRORS.invalid('url', 'url must start with ws:// or wss://');
        const config = (body.transcription_engine_config ?? {}) as Body;
        const hints = config.hints;
        if (hints !== undefined && (!Array.isArray(hints) || hints.some((hint) => typeof hint !== 'string')))
          throw TELNYX_ERRORS.invalid('transcription_engine_config/hints', 'hints must be an array of strings');
        const custom = body.custom_parameters ?? {};
        if (typeof custom !== 'object' || custom === null || Array.isArray(custom))
          throw TELNYX_ERRORS.invalid('custom_parameters', 'custom_parameters must be an object');
        return {
          url,
          greeting: text(body, 'greeting') ?? null,
          voice: text(body, 'voice'),
          language: text(body, 'language') ?? null,
          hints: (hints as string[] | undefined) ?? [],
          parameters: Object.fromEntries(Object.entries(custom).map(([name, value]) => [name, String(value)])),
        };
      },
    },
    // Play audio URL (docs/features/carriers/twins.md#the-telnyx-twin): the audio is fetched before the command is
    // queued, so that the call's loop knows what it plays (simulators/telnyx-twin/playback.ts).
    playback_start: {
      needsAnswer: true,
      read: (body) => ({ playback: readPlaybackStart(body) }),
      // An overlay needs an overlay=false file playing: one that plays, or one accepted ahead of it whose audio came.
      check: (state, ahead, params) =>
        assertFilePlays(
          (state.playbacks ?? []).some((playback) => !playback.overlay && !playback.waiting) ||
            ahead.some(
              (queued) =>
                queued.name === 'playback_start' &&
                !queued.params.playback!.overlay &&
                queued.params.playback!.fetched?.playable === true,
            ),
          params.playback!,
        ),
      prepare: async (params) => ({
        playback: { ...params.playback!, fetched: await fetchPlaybackAudio(params.playback!) },
      }),
    },
    // Start recording (StartCallRecord): saved at the call's end (recordings.ts).
    record_start: {
      needsAnswer: true,
      read: (body) => {
        const format = text(body, 'format', true);
        if (format !== 'wav' && format !== 'mp3') throw TELNYX_ERRORS.enumerated('format', ['wav', 'mp3']);
        const channels = text(body, 'channels', true);
        if (channels !== 'single' && channels !== 'dual')
          throw TELNYX_ERRORS.enumerated('channels', ['single', 'dual']);
        return { recording: { format, channels } };
      },
    },
    // Bridge calls (BridgeCall): the other call's id in `call_control_id`; both are checked live and answered below.
    bridge: {
      needsAnswer: true,
      read: (body) => ({ bridgeWith: text(body, 'call_control_id', true) }),
    },
    transfer: {
      needsAnswer: true,
      read: (body) => {
        const to = text(body, 'to', true)!;
        if (!E164.test(to) && !to.startsWith('sip:')) throw TELNYX_ERRORS.notE164('to');
        const from = text(body, 'from');
        if (from !== undefined && !E164.test(from)) throw TELNYX_ERRORS.notE164('from');
        const webhookUrl = text(body, 'webhook_url');
        if (webhookUrl !== undefined && !isHttpUrl(webhookUrl))
          throw TELNYX_ERRORS.invalid('webhook_url', 'webhook_url must be a valid URL');
        const target = text(body, 'target_leg_client_state');
        if (target !== undefined && !BASE64.test(target))
          throw TELNYX_ERRORS.invalid(
            'target_leg_client_state',
            'target_leg_client_state must be a valid Base-64 encoded string.',
          );
        return {
          to,
          from: from ?? null,
          timeoutSecs: integer(body, 'timeout_secs', 30, 5, 600),
          webhookUrl: webhookUrl ?? null,
          targetLegClientState: target ?? null,
        };
      },
    },
  };

  /** The call a bridge joins the commanded one to: of the same account, answered and live, not the call itself. */
  async function bridgedCallOf(commanded: TelnyxTwinCall, otherId: string): Promise<TelnyxTwinCall> {
    const other = await store.read(otherId);
    if (!other || other.account !== commanded.account || other.callControlId === commanded.callControlId)
      throw TELNYX_ERRORS.invalid(
        'call_control_id',
        'The call_control_id to bridge with is not a call of this account.',
      );
    if (other.status === 'hangup') throw TELNYX_ERRORS.ended();
    if (other.status !== 'answered') throw TELNYX_ERRORS.notAnswered();
    return other;
  }

  app.post(
    '/v2/calls/:id/actions/:action',
    route(async (req, res) => {
      const action = String(req.params.action);
      const spec = COMMANDS[action];
      const found = await callOf(req, res);
      if (!spec) throw TELNYX_ERRORS.notFound(`Command ${action}`);
      const body = (req.body ?? {}) as Body;
      let params = spec.read(body);
      const other = action === 'bridge' ? await bridgedCallOf(found, params.bridgeWith!) : null;
      if (other) params = { ...params, bridgeWithNumber: personNumberOf(other) };
      let prepared = !spec.prepare;
      const clientState = clientStateOf(body);
      const commandId = text(body, 'command_id') ?? null;
      // One command at a time per call: the duplicate check and the queue are decided on the queue as read, and the
      // queue written only if no other command was queued since (else read again and decide again).
      for (;;) {
        const row = (await store.read(found.callControlId))!;
        const commands = row.commands as QueuedCommand[];
        // Telnyx ignores a command whose command_id the call has seen: answered as accepted, not done again.
        if (commandId && commands.some((queued) => queued.commandId === commandId)) break;
        const state = row.state as CallState;
        const hangingUp = commands.some((queued) => queued.name === 'hangup' && queued.seq >= state.commandsTaken);
        if (row.status === 'hangup' || hangingUp) throw TELNYX_ERRORS.ended();
        if (spec.needsAnswer && row.status !== 'answered') throw TELNYX_ERRORS.notAnswered();
        const ahead = commands.filter((queued) => queued.seq >= state.commandsTaken);
        // A prepared command is judged as it was accepted, before what it prepared (a playback: when it was asked for).
        if (!prepared || !spec.prepare) spec.check?.(state, ahead, params);
        if (!prepared) {
          params = await spec.prepare!(params);
          prepared = true;
          continue;
        }
        const queued: QueuedCommand = {
          seq: commands.length,
          name: action as QueuedCommand['name'],
          commandId,
          clientState,
          at: Date.now(),
          params,
        };
        if (await store.queueCommands(row.callControlId, commands.length, [...commands, queued])) {
          // The other call of a bridge is joined too (its own call.bridged), once: not for a repeated command_id.
          if (other) {
            const joined = { bridgeWith: found.callControlId, bridgeWithNumber: personNumberOf(found) };
            await store.appendCommand(other.callControlId, { ...queued, commandId: null, params: joined });
            runner.wake(other.callControlId);
          }
          break;
        }
      }
      runner.wake(found.callControlId);
      res.json({ data: { result: 'ok' } });
    }),
  );

  recordings.addRoutes(app, route);
  addIncomingNumberRoutes({ app, sql, accounts: options.accounts, personas, calls: store, runner, route });

  app.use('/v2', (req, res) => fail(res, TELNYX_ERRORS.notFound(`The path ${req.originalUrl.split('?')[0]}`)));

  // ---- TEST CONTROL, not Telnyx's: personas and the twin's own record of what was said.

  addTwinControlRoutes(app, personas, async (id) => {
    const row = await store.read(id);
    return (
      row && {
        callControlId: row.callControlId,
        to: row.to,
        status: row.status,
        hangupCause: row.hangupCause,
        amdResult: row.amdResult,
        durationSec: row.durationSec,
        log: row.log as unknown as LogEntry[],
      }
    );
  });

  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (error instanceof TelnyxApiError) return fail(res, error);
    if (res.headersSent) return next(error);
    // A body that is not JSON (express.json's SyntaxError): Telnyx's 400.
    if (error instanceof SyntaxError)
      return fail(
        res,
        new TelnyxApiError(400, { code: '10028', title: 'Character encoding error', detail: error.message }),
      );
    console.error('telnyx twin: request failed', error);
    fail(
      res,
      new TelnyxApiError(500, { code: '10007', title: 'Internal server error', detail: 'Internal server error' }),
    );
  });

  let server: Server | undefined;
  return {
    async listen(port, host = '127.0.0.1') {
      await ensureTelnyxTwinTables(sql);
      await ensureApplications(sql, options.accounts);
      await recordings.ensureTable();
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      listeningUrl = listening.url;
      await runner.resume();
      return `${listening.url}/v2`;
    },
    async close() {
      await runner.close();
      await closeHttp(server);
      http.close();
    },
  };
}
