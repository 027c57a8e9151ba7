import { randomBytes } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { E164 } from '../twin-common/control-routes';
import type { TwinSql } from '../twin-common/sql';
import type { TwilioTwinCallStore } from './call-store';
import { TWILIO_TWIN_TABLES } from './call-store';
import { initialState, type CallRequest, type CallRunner } from './calls';
import { TWILIO_ERRORS } from './errors';
import { personaOf, type PersonaScript } from './persona';
import { formatted, rfc2822 } from './resource';
import type { HttpMethod } from './twiml';

/**
 * The account's phone numbers (Twilio's IncomingPhoneNumbers, docs/features/carriers/twins.md#inbound-calls-on-the-twilio-twin):
 * listed by PhoneNumber, fetched and updated as Twilio's description of the 2010-04-01 API has them
 * (vendor/openapi/twilio/), so that the product points a number at itself with the official SDK (its VoiceUrl and
 * StatusCallback). Kept in the twin's own schema (`twilio_twin.incoming_numbers`). TEST CONTROL, not Twilio's: a
 * number given to an account (as buying one would), and a person calling a number (the call asks its VoiceUrl).
 */
export interface IncomingNumber {
  sid: string;
  accountSid: string;
  phoneNumber: string;
  friendlyName: string;
  voiceUrl: string | null;
  voiceMethod: HttpMethod;
  statusCallback: string | null;
  statusCallbackMethod: HttpMethod;
  createdAt: Date;
  updatedAt: Date;
}

const NUMBERS = TWILIO_TWIN_TABLES.incomingNumbers;
const COLUMNS = `sid, "accountSid", "phoneNumber", "friendlyName", "voiceUrl", "voiceMethod", "statusCallback",
  "statusCallbackMethod", "createdAt", "updatedAt"`;

export function incomingNumberStore(sql: TwinSql) {
  return {
    /** The number given to the account (idempotent: a number the account holds stays as it is). */
    async add(accountSid: string, phoneNumber: string): Promise<IncomingNumber> {
      const sid = `PN${randomBytes(16).toString('hex')}`;
      await sql(
        `INSERT INTO ${NUMBERS} (sid, "accountSid", "phoneNumber", "friendlyName") VALUES ($1, $2, $3, $4)
         ON CONFLICT ("phoneNumber") DO NOTHING`,
        sid,
        accountSid,
        phoneNumber,
        formatted(phoneNumber),
      );
      const [row] = await sql<IncomingNumber>(
        `SELECT ${COLUMNS} FROM ${NUMBERS} WHERE "phoneNumber" = $1`,
        phoneNumber,
      );
      return row!;
    },
    async list(accountSid: string, phoneNumber: string | undefined): Promise<IncomingNumber[]> {
      return sql<IncomingNumber>(
        `SELECT ${COLUMNS} FROM ${NUMBERS} WHERE "accountSid" = $1 AND ($2::text IS NULL OR "phoneNumber" = $2)
          ORDER BY "createdAt", sid LIMIT 1000`,
        accountSid,
        phoneNumber ?? null,
      );
    },
    async read(sid: string): Promise<IncomingNumber | null> {
      const [row] = await sql<IncomingNumber>(`SELECT ${COLUMNS} FROM ${NUMBERS} WHERE sid = $1`, sid);
      return row ?? null;
    },
    async byNumber(phoneNumber: string): Promise<IncomingNumber | null> {
      const [row] = await sql<IncomingNumber>(
        `SELECT ${COLUMNS} FROM ${NUMBERS} WHERE "phoneNumber" = $1`,
        phoneNumber,
      );
      return row ?? null;
    },
    async update(sid: string, change: Partial<Omit<IncomingNumber, 'sid' | 'accountSid'>>): Promise<IncomingNumber> {
      const [row] = await sql<IncomingNumber>(
        `UPDATE ${NUMBERS} SET
           "friendlyName" = COALESCE($2, "friendlyName"), "voiceUrl" = COALESCE($3, "voiceUrl"),
           "voiceMethod" = COALESCE($4, "voiceMethod"), "statusCallback" = COALESCE($5, "statusCallback"),
           "statusCallbackMethod" = COALESCE($6, "statusCallbackMethod"), "updatedAt" = now()
          WHERE sid = $1 RETURNING ${COLUMNS}`,
        sid,
        change.friendlyName ?? null,
        change.voiceUrl ?? null,
        change.voiceMethod ?? null,
        change.statusCallback ?? null,
        change.statusCallbackMethod ?? null,
      );
      return row!;
    },
  };
}

/** The IncomingPhoneNumber resource (`api.v2010.account.incoming_phone_number`) as Twilio answers it. */
export function incomingNumberResource(row: IncomingNumber) {
  return {
    account_sid: row.accountSid,
    address_sid: null,
    address_requirements: 'none',
    api_version: '2010-04-01',
    beta: false,
    capabilities: { fax: false, mms: false, sms: false, voice: true },
    date_created: rfc2822(row.createdAt),
    date_updated: rfc2822(row.updatedAt),
    friendly_name: row.friendlyName,
    identity_sid: null,
    phone_number: row.phoneNumber,
    origin: 'twilio',
    sid: row.sid,
    sms_application_sid: null,
    sms_fallback_method: 'POST',
    sms_fallback_url: null,
    sms_method: 'POST',
    sms_url: null,
    status_callback: row.statusCallback,
    status_callback_method: row.statusCallbackMethod,
    trunk_sid: null,
    uri: `/2010-04-01/Accounts/${row.accountSid}/IncomingPhoneNumbers/${row.sid}.json`,
    voice_receive_mode: 'voice',
    voice_application_sid: null,
    voice_caller_id_lookup: false,
    voice_fallback_method: 'POST',
    voice_fallback_url: null,
    voice_method: row.voiceMethod,
    voice_url: row.voiceUrl,
    emergency_status: 'Inactive',
    emergency_address_sid: null,
    emergency_address_status: 'unregistered',
    bundle_sid: null,
    status: 'in-use',
    type: 'local',
  };
}

type Form = Record<string, string | string[] | undefined>;
const one = (form: Form, name: string): string | undefined => {
  const value = form[name];
  return Array.isArray(value) ? value.at(-1) : value;
};
const urlParameter = (form: Form, name: string): string | undefined => {
  const value = one(form, name);
  if (value === undefined || value === '') return undefined;
  let valid = false;
  try {
    valid = ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    valid = false;
  }
  if (!valid) throw TWILIO_ERRORS.badRequest(`${name} is not a valid URL: ${value}`);
  return value;
};
const methodParameter = (form: Form, name: string): HttpMethod | undefined => {
  const value = one(form, name);
  if (value === undefined || value === '') return undefined;
  const upper = value.toUpperCase();
  if (upper !== 'GET' && upper !== 'POST') throw TWILIO_ERRORS.badRequest(`${name} must be GET or POST`);
  return upper;
};

const incomingCallSchema = z.strictObject({
  from: z.string().regex(E164),
  to: z.string().regex(E164),
  /** The number's StatusCallback is never sent for this call: its end callback lost on the way. */
  loseStatusCallback: z.boolean().optional(),
});
const incomingNumberSchema = z.strictObject({
  accountSid: z.string().optional(),
  phoneNumber: z.string().regex(E164),
});

export interface IncomingNumberRoutes {
  app: Express;
  sql: TwinSql;
  accountPath: string;
  /** The accounts the twin serves: a control request naming none gives a number to the first. */
  accountSids: readonly string[];
  personas: ReadonlyMap<string, PersonaScript>;
  calls: TwilioTwinCallStore;
  runner: CallRunner;
  route: (
    handler: (req: Request, res: Response) => Promise<void>,
  ) => (req: Request, res: Response, next: NextFunction) => void;
}

/** The IncomingPhoneNumbers routes (behind the account's authentication) and their control routes. */
export function addIncomingNumberRoutes({
  app,
  sql,
  accountPath,
  accountSids,
  personas,
  calls,
  runner,
  route,
}: IncomingNumberRoutes) {
  const numbers = incomingNumberStore(sql);

  async function numberOf(req: Request): Promise<IncomingNumber> {
    const file = String(req.params.NumberFile);
    const sid = file.endsWith('.json') ? file.slice(0, -'.json'.length) : '';
    const row = sid ? await numbers.read(sid) : null;
    if (!row || row.accountSid !== req.params.AccountSid) throw TWILIO_ERRORS.notFound(req.path);
    return row;
  }

  app.get(
    `${accountPath}/IncomingPhoneNumbers.json`,
    route(async (req, res) => {
      const query = req.query as Record<string, string | undefined>;
      const accountSid = String(req.params.AccountSid);
      const found = await numbers.list(accountSid, query.PhoneNumber || undefined);
      const pageSize = Math.min(Math.max(Number(query.PageSize) || 50, 1), 1_000);
      const page = found.slice(0, pageSize);
      const uri = `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers.json?${new URLSearchParams({
        ...(query.PhoneNumber && { PhoneNumber: query.PhoneNumber }),
        PageSize: String(pageSize),
        Page: '0',
      }).toString()}`;
      res.json({
        end: Math.max(0, page.length - 1),
        first_page_uri: uri,
        incoming_phone_numbers: page.map(incomingNumberResource),
        next_page_uri: null,
        page: 0,
        page_size: pageSize,
        previous_page_uri: null,
        start: 0,
        uri,
      });
    }),
  );

  app.get(
    `${accountPath}/IncomingPhoneNumbers/:NumberFile`,
    route(async (req, res) => {
      res.json(incomingNumberResource(await numberOf(req)));
    }),
  );

  app.post(
    `${accountPath}/IncomingPhoneNumbers/:NumberFile`,
    route(async (req, res) => {
      const row = await numberOf(req);
      const form = (req.body ?? {}) as Form;
      const updated = await numbers.update(row.sid, {
        friendlyName: one(form, 'FriendlyName') || undefined,
        voiceUrl: urlParameter(form, 'VoiceUrl'),
        voiceMethod: methodParameter(form, 'VoiceMethod'),
        statusCallback: urlParameter(form, 'StatusCallback'),
        statusCallbackMethod: methodParameter(form, 'StatusCallbackMethod'),
      });
      res.json(incomingNumberResource(updated));
    }),
  );

  // ---- TEST CONTROL, not Twilio's.

  app.post(
    '/control/incoming-numbers',
    route(async (req, res) => {
      const parsed = incomingNumberSchema.safeParse(req.body);
      const accountSid = parsed.data?.accountSid ?? accountSids[0];
      if (!parsed.success || !accountSid || !accountSids.includes(accountSid)) {
        res.status(400).json({ error: 'invalid_body', issues: parsed.error?.issues ?? [] });
        return;
      }
      res.json(incomingNumberResource(await numbers.add(accountSid, parsed.data.phoneNumber)));
    }),
  );

  /**
   * A person at `from` calls `to`, a number of an account: Twilio takes the call and asks the number's VoiceUrl
   * (signed, Direction inbound) what to do, then obeys it as any call's TwiML, the persona of `from` answering its
   * Gathers; the number's StatusCallback hears the end (Twilio's number-level callback: completed only), unless
   * `loseStatusCallback` (the end callback lost on the way: the call is still fetched as Twilio has it). 404 when no
   * account holds the number or its VoiceUrl is not set (Twilio would play its own "not configured" message).
   */
  app.post(
    '/control/incoming-calls',
    route(async (req, res) => {
      const parsed = incomingCallSchema.safeParse(req.body);
      if (!parsed.success) {
        res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
        return;
      }
      const { from, to, loseStatusCallback = false } = parsed.data;
      const number = await numbers.byNumber(to);
      if (!number?.voiceUrl) {
        res.status(404).json({ error: number ? 'voice_url_not_set' : 'number_not_found' });
        return;
      }
      const request: CallRequest = {
        url: number.voiceUrl,
        method: number.voiceMethod,
        twiml: null,
        statusCallback: loseStatusCallback ? null : number.statusCallback,
        statusCallbackMethod: number.statusCallbackMethod,
        statusCallbackEvents: ['completed'],
        timeoutSec: 60,
        machineDetection: null,
        machineDetectionTimeoutSec: 30,
        asyncAmd: false,
        asyncAmdStatusCallback: null,
        asyncAmdStatusCallbackMethod: 'POST',
        timeLimitSec: 14_400,
        direction: 'inbound',
      };
      const sid = `CA${randomBytes(16).toString('hex')}`;
      const row = await calls.create({
        sid,
        accountSid: number.accountSid,
        to,
        from,
        createdAt: new Date(),
        request,
        persona: personaOf(personas, from),
        state: initialState(request, to),
        initiated: null,
      });
      runner.start(row.sid);
      res.status(201).json({ sid: row.sid, accountSid: row.accountSid, from, to });
    }),
  );
}
