import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import { addTwinControlRoutes, E164 } from '../twin-common/control-routes';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createJsonHttp } from '../../lib/http/json-http';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import { sleep, type RetryBackoff } from '../../lib/http/post-until-answered';
import { createCallRunner, initialState, isEnded, type CallRequest, type LogEntry, type Redirect } from './calls';
import {
  ensureTwilioTwinTables,
  twilioTwinCallStore,
  type CallFilter,
  type TimeRange,
  type TwilioTwinCall,
} from './call-store';
import type { TwinSql } from '../twin-common/sql';
import { TWILIO_ERRORS, TwilioRestError } from './errors';
import { personaOf, type PersonaScript } from './persona';
import { callResource, rfc2822 } from './resource';
import type { HttpMethod } from './twiml';
import { addIncomingNumberRoutes, incomingNumberStore } from './incoming-numbers';
import { createTwinRecordings } from './recordings';

/**
 * The Twilio twin (docs/features/carriers/twins.md#the-twilio-twin): a local server that speaks Twilio's Programmable Voice
 * protocol, so that the official `twilio` package places calls on it with only its base URL and credentials changed.
 * REST (form-encoded, HTTP Basic auth, Twilio's JSON errors) under /2010-04-01; the calls themselves run in
 * calls.ts; TEST CONTROL routes (not Twilio's) under /control.
 */
export interface TwinAccount {
  sid: string;
  authToken: string;
  /** API keys of the account: an SK... SID and its secret authenticate as the account. */
  apiKeys?: { sid: string; secret: string }[];
  /**
   * The numbers the account may call from (its Twilio numbers and verified caller ids): a create with another From is
   * refused with Twilio's 21210. Absent: any From is taken.
   */
  callerIds?: string[];
  /**
   * The destinations the account's Voice Geographic Permissions allow, as E.164 prefixes (`+1`, `+44`): a create to
   * another To is refused with Twilio's 21215. Absent: any.
   */
  geoPermissions?: string[];
  /** The account's phone numbers (IncomingPhoneNumbers), given to it at start: inbound calls reach them. */
  incomingNumbers?: string[];
}

export interface TwilioTwinOptions {
  /** Runs its SQL on the database its own schema (`twilio_twin`, call-store.ts) is made in at listen. */
  sql: TwinSql;
  accounts: readonly TwinAccount[];
  /** 1: real time; 0.001: a 40 s call lasts 40 ms. */
  timeScale: number;
  /** 'until-answered' (default): callbacks retried with backoff until answered 2xx; 'once': Twilio's default. */
  callbackDelivery?: 'until-answered' | 'once';
  retry?: RetryBackoff;
  fetchTimeoutMs?: number;
  /** The espeak-ng program that speaks a recording's lines (twin-common/spoken-audio.ts); default: on the PATH. */
  espeakPath?: string;
}

export interface TwilioTwin {
  listen(port: number, host?: string): Promise<string>;
  /** Stops the calls' loops and deliveries (the next start goes on with them) and closes the server. */
  close(): Promise<void>;
}

const STATUS_CALLBACK_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];
const CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'busy', 'failed', 'no-answer', 'canceled'];

type Form = Record<string, string | string[] | undefined>;
const one = (form: Form, name: string): string | undefined => {
  const value = form[name];
  return Array.isArray(value) ? value.at(-1) : value;
};
const many = (form: Form, name: string): string[] => {
  const value = form[name];
  return value === undefined
    ? []
    : [value]
        .flat()
        .flatMap((item) => item.split(/[\s,]+/))
        .filter(Boolean);
};
const isHttpUrl = (value: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};
const httpMethod = (value: string | undefined, name: string): HttpMethod => {
  if (value === undefined || value === '') return 'POST';
  const upper = value.toUpperCase();
  if (upper !== 'GET' && upper !== 'POST') throw TWILIO_ERRORS.badRequest(`${name} must be GET or POST`);
  return upper;
};
const integer = (value: string | undefined, name: string, fallback: number, min: number, max: number) => {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max)
    throw TWILIO_ERRORS.badRequest(`${name} must be an integer from ${min} to ${max}`);
  return parsed;
};
const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Twilio's create parameters read and checked, in the order Twilio reports their faults. */
function callRequest(form: Form): { to: string; from: string; request: CallRequest } {
  const to = one(form, 'To');
  const from = one(form, 'From');
  const url = one(form, 'Url') || null;
  const twiml = one(form, 'Twiml') || null;
  if (!to) throw TWILIO_ERRORS.noTo();
  if (!from) throw TWILIO_ERRORS.noFrom();
  if (!url && !twiml) throw TWILIO_ERRORS.noUrl();
  if (!E164.test(to)) throw TWILIO_ERRORS.invalidTo(to);
  if (!E164.test(from)) throw TWILIO_ERRORS.invalidFrom(from);
  if (url && !isHttpUrl(url)) throw TWILIO_ERRORS.invalidUrl(url);
  const statusCallback = one(form, 'StatusCallback') || null;
  if (statusCallback && !isHttpUrl(statusCallback)) throw TWILIO_ERRORS.invalidStatusCallback(statusCallback);
  const events = many(form, 'StatusCallbackEvent');
  const unknownEvent = events.find((event) => !STATUS_CALLBACK_EVENTS.includes(event));
  if (unknownEvent) throw TWILIO_ERRORS.invalidStatusCallbackEvent(unknownEvent);
  const machineDetection = one(form, 'MachineDetection') || null;
  if (machineDetection && machineDetection !== 'Enable' && machineDetection !== 'DetectMessageEnd')
    throw TWILIO_ERRORS.badRequest('MachineDetection must be Enable or DetectMessageEnd');
  const asyncAmd = one(form, 'AsyncAmd');
  if (asyncAmd !== undefined && asyncAmd !== 'true' && asyncAmd !== 'false')
    throw TWILIO_ERRORS.badRequest('AsyncAmd must be true or false');
  const asyncAmdStatusCallback = one(form, 'AsyncAmdStatusCallback') || null;
  if (asyncAmdStatusCallback && !isHttpUrl(asyncAmdStatusCallback))
    throw TWILIO_ERRORS.badRequest(`AsyncAmdStatusCallback is not a valid URL: ${asyncAmdStatusCallback}`);
  return {
    to,
    from,
    request: {
      url,
      method: httpMethod(one(form, 'Method'), 'Method'),
      twiml,
      statusCallback,
      statusCallbackMethod: httpMethod(one(form, 'StatusCallbackMethod'), 'StatusCallbackMethod'),
      // None named: Twilio sends the completed event only.
      statusCallbackEvents: events.length > 0 ? events : ['completed'],
      timeoutSec: integer(one(form, 'Timeout'), 'Timeout', 60, 1, 600),
      machineDetection: machineDetection as CallRequest['machineDetection'],
      machineDetectionTimeoutSec: integer(one(form, 'MachineDetectionTimeout'), 'MachineDetectionTimeout', 30, 3, 59),
      asyncAmd: asyncAmd === 'true',
      asyncAmdStatusCallback,
      asyncAmdStatusCallbackMethod: httpMethod(
        one(form, 'AsyncAmdStatusCallbackMethod'),
        'AsyncAmdStatusCallbackMethod',
      ),
      timeLimitSec: integer(one(form, 'TimeLimit'), 'TimeLimit', 14_400, 1, 86_400),
    },
  };
}

/** A listing's date filter: a day (YYYY-MM-DD, UTC) or an instant; null when it is neither. */
function dateFilter(value: string): { from: Date; to: Date; instant: boolean } | null {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = new Date(day ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(date.getTime())) return null;
  const dayStart = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  return { from: day ? date : dayStart, to: new Date(dayStart.getTime() + 86_400_000), instant: !day };
}

export function createTwilioTwin(options: TwilioTwinOptions): TwilioTwin {
  const { sql } = options;
  const accounts = new Map(options.accounts.map((account) => [account.sid, account]));
  const http = createJsonHttp({ sockets: 64 });
  let listeningUrl = '';
  const recordings = createTwinRecordings({
    sql,
    calls: twilioTwinCallStore(sql),
    baseUrl: () => listeningUrl,
    espeakPath: options.espeakPath,
  });
  const runner = createCallRunner({
    sql,
    http,
    timeScale: options.timeScale,
    authTokenOf: (sid) => accounts.get(sid)?.authToken,
    callbackDelivery: options.callbackDelivery ?? 'until-answered',
    retry: options.retry ?? { firstMs: 500, maxMs: 30_000 },
    fetchTimeoutMs: options.fetchTimeoutMs,
    recordingCallbacksAtEnd: (row, endMs) => recordings.callbacksAtEnd(row, endMs),
  });
  /** TEST CONTROL: the scripted persona of each number (in memory; a call keeps the script it was dialed with). */
  const personas = new Map<string, PersonaScript>();
  const store = twilioTwinCallStore(sql);

  const app = express();
  app.disable('x-powered-by');
  app.use(express.urlencoded({ extended: false, limit: '1mb' }));
  app.use('/control', express.json({ limit: '1mb' }));

  const route =
    (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) => {
      handler(req, res).catch(next);
    };

  /** HTTP Basic with the account's SID and auth token, or one of its API keys; for the account of the path. */
  function authenticate(req: Request, res: Response, next: NextFunction) {
    const header = req.headers.authorization ?? '';
    const [scheme, encoded] = header.split(' ');
    const decoded = scheme?.toLowerCase() === 'basic' && encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const [username, password] = colon < 0 ? ['', ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    const account = accounts.get(String(req.params.AccountSid));
    const valid =
      account !== undefined &&
      ((username === account.sid && same(password, account.authToken)) ||
        (account.apiKeys ?? []).some((key) => username === key.sid && same(password, key.secret)));
    if (valid) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="Twilio API"');
    fail(res, TWILIO_ERRORS.authenticate());
  }

  function fail(res: Response, error: TwilioRestError) {
    res.status(error.status).json(error.body);
  }

  /** The call of the path, of the path's account. */
  async function callOf(req: Request): Promise<TwilioTwinCall> {
    const file = String(req.params.CallFile);
    const sid = file.endsWith('.json') ? file.slice(0, -'.json'.length) : '';
    const row = sid ? await store.read(sid) : null;
    if (!row || row.accountSid !== req.params.AccountSid) throw TWILIO_ERRORS.notFound(req.path);
    return row;
  }

  /** Waits (briefly) until the call's loop has taken the hangup just asked for, so that the answer shows its end. */
  async function settled(sid: string): Promise<TwilioTwinCall> {
    for (let waited = 0; ; waited += 10) {
      const row = (await store.read(sid))!;
      if (isEnded(row.status) || waited >= 2_000) return row;
      await sleep(10, AbortSignal.timeout(1_000));
    }
  }

  const accountPath = '/2010-04-01/Accounts/:AccountSid';
  app.use(accountPath, authenticate);

  app.post(
    `${accountPath}/Calls.json`,
    route(async (req, res) => {
      const { to, from, request } = callRequest((req.body ?? {}) as Form);
      const account = accounts.get(String(req.params.AccountSid));
      if (account?.callerIds && !account.callerIds.includes(from)) throw TWILIO_ERRORS.fromNotVerified(from);
      if (account?.geoPermissions && !account.geoPermissions.some((prefix) => to.startsWith(prefix)))
        throw TWILIO_ERRORS.geoPermission(to);
      const sid = `CA${randomBytes(16).toString('hex')}`;
      const now = new Date();
      const initiated = request.statusCallback !== null && request.statusCallbackEvents.includes('initiated');
      // The initiated event is owed from the start: it is written with the call, as its callback 0.
      const state = { ...initialState(request, to), statusSeq: initiated ? 1 : 0, callbackSeq: initiated ? 1 : 0 };
      const accountSid = String(req.params.AccountSid);
      const row = await store.create({
        sid,
        accountSid,
        to,
        from,
        createdAt: now,
        request,
        persona: personaOf(personas, to),
        state,
        initiated: initiated
          ? {
              url: request.statusCallback!,
              method: request.statusCallbackMethod,
              params: {
                AccountSid: accountSid,
                ApiVersion: '2010-04-01',
                CallSid: sid,
                CallStatus: 'initiated',
                Called: to,
                Caller: from,
                CallbackSource: 'call-progress-events',
                Direction: 'outbound-api',
                From: from,
                SequenceNumber: '0',
                Timestamp: rfc2822(now),
                To: to,
              },
            }
          : null,
      });
      res.status(201).json(callResource(row));
      runner.start(sid);
      runner.deliver(sid, row.accountSid);
    }),
  );

  app.get(
    `${accountPath}/Calls.json`,
    route(async (req, res) => {
      const query = req.query as Record<string, string | undefined>;
      const accountSid = String(req.params.AccountSid);
      const pageSize = integer(query.PageSize, 'PageSize', 50, 1, 1_000);
      const page = integer(query.Page, 'Page', 0, 0, Number.MAX_SAFE_INTEGER);
      const where: CallFilter = { accountSid };
      if (query.To) where.to = query.To;
      if (query.From) where.from = query.From;
      if (query.Status) {
        if (!CALL_STATUSES.includes(query.Status))
          throw TWILIO_ERRORS.badRequest(`Status is not a call status: ${query.Status}`);
        where.status = query.Status;
      }
      // Only calls this twin placed, which have no parent: a ParentCallSid filter finds none.
      if (query.ParentCallSid) where.none = true;
      const ranges: TimeRange[] = [];
      for (const [field, name] of [
        ['startTime', 'StartTime'],
        ['endTime', 'EndTime'],
      ] as const) {
        const filters: [string, 'on' | 'before' | 'after'][] = [
          [name, 'on'],
          [`${name}<`, 'before'],
          [`${name}>`, 'after'],
        ];
        const range: TimeRange = {};
        for (const [parameter, kind] of filters) {
          const value = query[parameter];
          if (value === undefined) continue;
          const date = dateFilter(value);
          if (!date) throw TWILIO_ERRORS.badRequest(`${parameter} is not a date: ${value}`);
          if (kind === 'on')
            Object.assign(range, {
              gte: date.instant ? new Date(date.to.getTime() - 86_400_000) : date.from,
              lt: date.to,
            });
          else if (kind === 'before') range.lt = date.from;
          else range.gte = date.from;
        }
        if (Object.keys(range).length > 0) {
          where[field] = range;
          ranges.push(range);
        }
      }
      const token = query.PageToken ?? '';
      let calls: TwilioTwinCall[];
      let hasNext: boolean;
      if (/^PBCA[0-9a-f]{32}$/.test(token)) {
        // The page before the one that began with this call: read backwards from it.
        calls = await store.list(where, { before: token.slice(2), take: pageSize });
        hasNext = true;
      } else {
        const after = /^PACA[0-9a-f]{32}$/.test(token) ? token.slice(2) : null;
        const found = await store.list(
          where,
          after ? { after, take: pageSize + 1 } : { skip: page * pageSize, take: pageSize + 1 },
        );
        hasNext = found.length > pageSize;
        calls = found.slice(0, pageSize);
      }
      // The page's URIs keep the filters as given, then PageSize, Page and PageToken, as Twilio writes them.
      const filters = Object.entries(query).filter(
        (entry): entry is [string, string] =>
          !['PageSize', 'Page', 'PageToken'].includes(entry[0]) && typeof entry[1] === 'string',
      );
      const uri = (pageIndex: number, pageToken?: string) =>
        `/2010-04-01/Accounts/${accountSid}/Calls.json?${new URLSearchParams([
          ...filters,
          ['PageSize', String(pageSize)],
          ['Page', String(pageIndex)],
          ...(pageToken ? [['PageToken', pageToken] as [string, string]] : []),
        ]).toString()}`;
      const start = page * pageSize;
      res.json({
        calls: calls.map(callResource),
        end: Math.max(start, start + calls.length - 1),
        first_page_uri: uri(0),
        next_page_uri: hasNext && calls.length > 0 ? uri(page + 1, `PA${calls.at(-1)!.sid}`) : null,
        page,
        page_size: pageSize,
        previous_page_uri: page > 0 && calls.length > 0 ? uri(page - 1, `PB${calls[0]!.sid}`) : null,
        start,
        uri: uri(page, token || undefined),
      });
    }),
  );

  app.get(
    `${accountPath}/Calls/:CallFile`,
    route(async (req, res) => {
      res.json(callResource(await callOf(req)));
    }),
  );

  app.post(
    `${accountPath}/Calls/:CallFile`,
    route(async (req, res) => {
      const row = await callOf(req);
      const form = (req.body ?? {}) as Form;
      const status = one(form, 'Status');
      const url = one(form, 'Url') || null;
      const twiml = one(form, 'Twiml') || null;
      const statusCallback = one(form, 'StatusCallback') || null;
      if (status !== undefined && status !== 'canceled' && status !== 'completed')
        throw TWILIO_ERRORS.badRequest(`Status must be canceled or completed: ${status}`);
      if (url && !isHttpUrl(url)) throw TWILIO_ERRORS.invalidUrl(url);
      if (statusCallback && !isHttpUrl(statusCallback)) throw TWILIO_ERRORS.invalidStatusCallback(statusCallback);
      if ((url || twiml) && isEnded(row.status)) throw TWILIO_ERRORS.notInProgress();
      const method = httpMethod(one(form, 'Method'), 'Method');
      const data: { request?: CallRequest; redirect?: Redirect; hangupRequestedAt?: Date } = {};
      if (statusCallback || one(form, 'StatusCallbackMethod')) {
        const request = row.request as unknown as CallRequest;
        data.request = {
          ...request,
          statusCallback: statusCallback ?? request.statusCallback,
          statusCallbackMethod: httpMethod(
            one(form, 'StatusCallbackMethod') ?? request.statusCallbackMethod,
            'StatusCallbackMethod',
          ),
        };
      }
      if (url || twiml) {
        const before = row.redirect as Redirect | null;
        data.redirect = {
          seq: (before?.seq ?? 0) + 1,
          ...(twiml ? { twiml } : { url: url!, method }),
        } as Redirect;
      }
      // canceled ends a call still queued or ringing and leaves one in progress alone; completed ends either.
      const hangsUp =
        !isEnded(row.status) && (status === 'completed' || (status === 'canceled' && row.status !== 'in-progress'));
      if (hangsUp) data.hangupRequestedAt = new Date();
      if (Object.keys(data).length === 0) {
        res.json(callResource(row));
        return;
      }
      await store.update(row.sid, data);
      runner.wake(row.sid);
      res.json(callResource(hangsUp ? await settled(row.sid) : (await store.read(row.sid))!));
    }),
  );

  recordings.addRoutes(app, accountPath, route);

  addIncomingNumberRoutes({
    app,
    sql,
    accountPath,
    accountSids: options.accounts.map((account) => account.sid),
    personas,
    calls: store,
    runner,
    route,
  });

  app.use('/2010-04-01', (req, res) => fail(res, TWILIO_ERRORS.notFound(req.originalUrl.split('?')[0]!)));

  // ---- TEST CONTROL, not Twilio's: personas and the twin's own record of what was said.

  addTwinControlRoutes(app, personas, async (sid) => {
    const row = await store.read(sid);
    return (
      row && {
        sid: row.sid,
        to: row.to,
        status: row.status,
        answeredBy: row.answeredBy,
        durationSec: row.durationSec,
        log: row.log as unknown as LogEntry[],
      }
    );
  });

  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (error instanceof TwilioRestError) return fail(res, error);
    if (res.headersSent) return next(error);
    console.error('twilio twin: request failed', error);
    fail(res, new TwilioRestError(500, 20500, 'Internal Server Error'));
  });

  let server: Server | undefined;
  return {
    async listen(port, host = '127.0.0.1') {
      await ensureTwilioTwinTables(sql);
      await recordings.ensureTable();
      const numbers = incomingNumberStore(sql);
      for (const account of options.accounts)
        for (const number of account.incomingNumbers ?? []) await numbers.add(account.sid, number);
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      listeningUrl = listening.url;
      await runner.resume();
      return listening.url;
    },
    async close() {
      await runner.close();
      await closeHttp(server);
      http.close();
    },
  };
}
