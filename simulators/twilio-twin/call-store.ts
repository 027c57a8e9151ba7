import { type TwinSql, twinSchemaBatch } from '../twin-common/sql';

/**
 * The twin's own durable record, in a PostgreSQL schema of its own (`twilio_twin`), not in the product's
 * (prisma/schema.prisma): a call and the callbacks it owes, so that a twin killed mid-call goes on with it after a
 * restart. Made at start (ensureTwilioTwinTables), idempotently. Its SQL is the twin's own, hot path included (a
 * call's create, each step's commit, its callbacks' delivery, as named statements parsed once per connection).
 */
export const TWILIO_TWIN_SCHEMA = 'twilio_twin';
export const TWILIO_TWIN_TABLES = {
  calls: `${TWILIO_TWIN_SCHEMA}.calls`,
  callbacks: `${TWILIO_TWIN_SCHEMA}.callbacks`,
  /** The accounts' phone numbers (incoming-numbers.ts): where an inbound call's TwiML is asked. */
  incomingNumbers: `${TWILIO_TWIN_SCHEMA}.incoming_numbers`,
};
const { calls: CALLS, callbacks: CALLBACKS } = TWILIO_TWIN_TABLES;

/** A call placed on the twin. */
export interface TwilioTwinCall {
  /** Twilio's Call SID: CA and 32 hex digits. */
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  /** Twilio's call status (queued, ringing, in-progress, completed, busy, no-answer, failed, canceled). */
  status: string;
  answeredBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the twin dialed the number (Twilio's start_time) and when the call ended. */
  startTime: Date | null;
  endTime: Date | null;
  /** Seconds from the answer to the end (Twilio's duration); null until an answered call ends. */
  durationSec: number | null;
  /** What the create asked for (Url, Method, Twiml, StatusCallback and its events, Timeout, machine detection). */
  request: unknown;
  /** The persona scripted for the number when it was dialed (test control), or null for the default persona. */
  persona: unknown;
  /** Where the call's life is: its next step, the TwiML being obeyed, detection (calls.ts). */
  state: unknown;
  /** What each side said and did, in order (GET /control/calls/{sid}/log). */
  log: unknown;
  /** POST .../Calls/{sid}.json with Status: the call ends at this time unless it had ended before. */
  hangupRequestedAt: Date | null;
  /** POST .../Calls/{sid}.json with Url or Twiml: the newest redirect ({ seq, url, method } or { seq, twiml }). */
  redirect: unknown;
}

const SCHEMA_SQL = twinSchemaBatch(
  TWILIO_TWIN_SCHEMA,
  `
CREATE TABLE IF NOT EXISTS ${CALLS} (
  sid text PRIMARY KEY,
  "accountSid" text NOT NULL,
  "to" text NOT NULL,
  "from" text NOT NULL,
  status text NOT NULL,
  "answeredBy" text,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "updatedAt" timestamptz NOT NULL DEFAULT now(),
  "startTime" timestamptz,
  "endTime" timestamptz,
  "durationSec" integer,
  request jsonb NOT NULL,
  persona jsonb,
  state jsonb NOT NULL,
  log jsonb NOT NULL DEFAULT '[]',
  "hangupRequestedAt" timestamptz,
  redirect jsonb
);
CREATE INDEX IF NOT EXISTS calls_account_created_idx ON ${CALLS} ("accountSid", "createdAt");
CREATE TABLE IF NOT EXISTS ${CALLBACKS} (
  "callSid" text NOT NULL REFERENCES ${CALLS} (sid) ON DELETE CASCADE,
  seq integer NOT NULL,
  url text NOT NULL,
  method text NOT NULL,
  params jsonb NOT NULL,
  "deliveredAt" timestamptz,
  PRIMARY KEY ("callSid", seq)
);
CREATE TABLE IF NOT EXISTS ${TWILIO_TWIN_TABLES.incomingNumbers} (
  sid text PRIMARY KEY,
  "accountSid" text NOT NULL,
  "phoneNumber" text NOT NULL UNIQUE,
  "friendlyName" text NOT NULL,
  "voiceUrl" text,
  "voiceMethod" text NOT NULL DEFAULT 'POST',
  "statusCallback" text,
  "statusCallbackMethod" text NOT NULL DEFAULT 'POST',
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "updatedAt" timestamptz NOT NULL DEFAULT now()
);
`,
);

export async function ensureTwilioTwinTables(sql: TwinSql): Promise<void> {
  await sql(SCHEMA_SQL);
}

const CALL_COLUMNS = `sid, "accountSid", "to", "from", status, "answeredBy", "createdAt", "updatedAt", "startTime", "endTime",
  "durationSec", request, persona, state, log, "hangupRequestedAt", redirect`;

/** A range of a time column, as the list's StartTime/EndTime filters give it. */
export interface TimeRange {
  gte?: Date;
  lt?: Date;
}

/** Which calls GET .../Calls.json lists (the account's; each filter given narrows them). */
export interface CallFilter {
  accountSid: string;
  to?: string;
  from?: string;
  status?: string;
  /** ParentCallSid: the twin's calls have no parent, so none is found. */
  none?: boolean;
  startTime?: TimeRange;
  endTime?: TimeRange;
}

/** The page: from a call onwards (newest first), before one (read backwards), or by offset. */
export type CallPage =
  { after: string; take: number } | { before: string; take: number } | { skip: number; take: number };

/** A callback owed, as written with the step that caused it. */
export interface OwedCallback {
  seq: number;
  url: string;
  method: string;
  params: Record<string, string>;
}

/** What a step changes on the call's columns besides its state and log. */
export interface CallPatch {
  status?: string;
  answeredBy?: string;
  endTime?: Date;
  durationSec?: number | null;
}

export interface NewCall {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  createdAt: Date;
  request: unknown;
  persona: unknown;
  state: unknown;
  /** The callback owed from the start (initiated), written with the call. */
  initiated: Omit<OwedCallback, 'seq'> | null;
}

export type TwilioTwinCallStore = ReturnType<typeof twilioTwinCallStore>;

export function twilioTwinCallStore(sql: TwinSql) {
  return {
    async read(sid: string): Promise<TwilioTwinCall | null> {
      const [row] = await sql<TwilioTwinCall>(
        { name: 'twilio_twin_call', text: `SELECT ${CALL_COLUMNS} FROM ${CALLS} WHERE sid = $1` },
        sid,
      );
      return row ?? null;
    },

    /** The call and its first callback in one statement: queued, dialed at once (its start_time is its creation). */
    async create(call: NewCall): Promise<TwilioTwinCall> {
      const [row] = await sql<TwilioTwinCall>(
        {
          name: 'twilio_twin_call_create',
          text: `WITH created AS (
                   INSERT INTO ${CALLS} (sid, "accountSid", "to", "from", status, "createdAt", "updatedAt", "startTime",
                                                 request, persona, state)
                   VALUES ($1, $2, $3, $4, 'queued', $5::timestamptz, $5::timestamptz, $5::timestamptz, $6::jsonb, $7::jsonb, $8::jsonb)
                   RETURNING ${CALL_COLUMNS}
                 ), initiated AS (
                   INSERT INTO ${CALLBACKS} ("callSid", seq, url, method, params)
                   SELECT $1, 0, c.url, c.method, c.params FROM jsonb_to_record($9::jsonb) AS c(url text, method text, params jsonb)
                    WHERE $9::jsonb IS NOT NULL
                 )
                 SELECT * FROM created`,
        },
        call.sid,
        call.accountSid,
        call.to,
        call.from,
        call.createdAt.toISOString(),
        JSON.stringify(call.request),
        call.persona === null || call.persona === undefined ? null : JSON.stringify(call.persona),
        JSON.stringify(call.state),
        call.initiated ? JSON.stringify(call.initiated) : null,
      );
      return row!;
    },

    /** A step committed: the call's columns, state and log, and the callbacks it owes, in one statement. */
    async commit(
      sid: string,
      change: { patch: CallPatch; state: unknown; log: unknown; callbacks: OwedCallback[] },
    ): Promise<TwilioTwinCall> {
      const { patch } = change;
      const [row] = await sql<TwilioTwinCall>(
        {
          name: 'twilio_twin_call_commit',
          text: `WITH updated AS (
                   UPDATE ${CALLS} SET
                     status = CASE WHEN $2::jsonb ? 'status' THEN $2::jsonb->>'status' ELSE status END,
                     "answeredBy" = CASE WHEN $2::jsonb ? 'answeredBy' THEN $2::jsonb->>'answeredBy' ELSE "answeredBy" END,
                     "endTime" = CASE WHEN $2::jsonb ? 'endTime'
                                      THEN ($2::jsonb->>'endTime')::timestamptz ELSE "endTime" END,
                     "durationSec" = CASE WHEN $2::jsonb ? 'durationSec' THEN ($2::jsonb->>'durationSec')::int ELSE "durationSec" END,
                     state = $3::jsonb, log = $4::jsonb, "updatedAt" = now()
                    WHERE sid = $1
                   RETURNING ${CALL_COLUMNS}
                 ), owed AS (
                   INSERT INTO ${CALLBACKS} ("callSid", seq, url, method, params)
                   SELECT $1, c.seq, c.url, c.method, c.params
                     FROM jsonb_to_recordset($5::jsonb) AS c(seq int, url text, method text, params jsonb)
                 )
                 SELECT * FROM updated`,
        },
        sid,
        JSON.stringify(patch),
        JSON.stringify(change.state),
        JSON.stringify(change.log),
        JSON.stringify(change.callbacks),
      );
      if (!row) throw new Error(`twilio twin: call ${sid} is gone`);
      return row;
    },

    /** The call's callbacks not yet delivered, in order. */
    owed: (sid: string) =>
      sql<OwedCallback>(
        {
          name: 'twilio_twin_callbacks_owed',
          text: `SELECT seq, url, method, params FROM ${CALLBACKS}
                  WHERE "callSid" = $1 AND "deliveredAt" IS NULL ORDER BY seq`,
        },
        sid,
      ),

    delivered: (sid: string, seq: number) =>
      sql(
        {
          name: 'twilio_twin_callback_delivered',
          text: `UPDATE ${CALLBACKS} SET "deliveredAt" = now() WHERE "callSid" = $1 AND seq = $2`,
        },
        sid,
        seq,
      ),

    /** What the REST API changes on a call: its status callback, a redirect, a hangup asked for. */
    async update(
      sid: string,
      change: { request?: unknown; redirect?: unknown; hangupRequestedAt?: Date },
    ): Promise<void> {
      await sql(
        `UPDATE ${CALLS} SET
           request = COALESCE($2::jsonb, request),
           redirect = COALESCE($3::jsonb, redirect),
           "hangupRequestedAt" = COALESCE($4::timestamptz, "hangupRequestedAt"),
           "updatedAt" = now()
          WHERE sid = $1`,
        sid,
        change.request === undefined ? null : JSON.stringify(change.request),
        change.redirect === undefined ? null : JSON.stringify(change.redirect),
        change.hangupRequestedAt ?? null,
      );
    },

    /**
     * A page of the account's calls, newest first (createdAt, then sid). `after`: those past that call; `before`: those
     * before it, still newest first; `skip`: by offset. A cursor naming no call finds none.
     */
    async list(filter: CallFilter, page: CallPage): Promise<TwilioTwinCall[]> {
      const values: unknown[] = [filter.accountSid];
      const where = ['"accountSid" = $1'];
      const bind = (value: unknown) => `$${values.push(value)}`;
      if (filter.to !== undefined) where.push(`"to" = ${bind(filter.to)}`);
      if (filter.from !== undefined) where.push(`"from" = ${bind(filter.from)}`);
      if (filter.status !== undefined) where.push(`status = ${bind(filter.status)}`);
      if (filter.none) where.push('false');
      for (const [column, range] of [
        ['"startTime"', filter.startTime],
        ['"endTime"', filter.endTime],
      ] as const) {
        if (range?.gte) where.push(`${column} >= ${bind(range.gte)}`);
        if (range?.lt) where.push(`${column} < ${bind(range.lt)}`);
      }
      const cursor = (sid: string) => `(SELECT "createdAt", sid FROM ${CALLS} WHERE sid = ${bind(sid)})`;
      let order = '"createdAt" DESC, sid DESC';
      let offset = 0;
      if ('after' in page) where.push(`("createdAt", sid) < ${cursor(page.after)}`);
      else if ('before' in page) {
        where.push(`("createdAt", sid) > ${cursor(page.before)}`);
        order = '"createdAt" ASC, sid ASC';
      } else offset = page.skip;
      const rows = await sql<TwilioTwinCall>(
        `SELECT ${CALL_COLUMNS} FROM ${CALLS} WHERE ${where.join(' AND ')} ORDER BY ${order}
          LIMIT ${bind(page.take)} OFFSET ${bind(offset)}`,
        ...values,
      );
      return 'before' in page ? rows.reverse() : rows;
    },

    /** Calls not yet ended: a restarted twin goes on with them. */
    async live(terminal: readonly string[]): Promise<string[]> {
      const rows = await sql<{ sid: string }>(`SELECT sid FROM ${CALLS} WHERE status <> ALL($1::text[])`, terminal);
      return rows.map((row) => row.sid);
    },

    /** Calls that owe a callback, with their account: a restarted twin delivers them. */
    owing: () =>
      sql<{ callSid: string; accountSid: string }>(
        `SELECT DISTINCT b."callSid", c."accountSid" FROM ${CALLBACKS} b JOIN ${CALLS} c ON c.sid = b."callSid"
          WHERE b."deliveredAt" IS NULL`,
      ),
  };
}
