import type { TwilioTwinCall } from '../../generated/prisma/client';
import type { Database } from '../../lib/database';

// The twin's own SQL on its hot path: a call's create, each step's commit, and its callbacks' delivery, as named
// statements on the pool. Through Prisma these cost the twin about 30 ms of CPU a three-call lead (its query compiler
// and client), and the twin shares the machine with the product in bench/twilio-twin-ladder.ts, whose figures it
// weighed on. The rest of the twin (listing, the REST API's updates, control routes) stays on Prisma.

/** The call's columns as Prisma reads them: timestamps are stored as UTC wall-clock time, read back as instants. */
const CALL_COLUMNS = `sid, "accountSid", "to", "from", status, "answeredBy",
  ("createdAt" AT TIME ZONE 'UTC') AS "createdAt", ("updatedAt" AT TIME ZONE 'UTC') AS "updatedAt",
  ("startTime" AT TIME ZONE 'UTC') AS "startTime", ("endTime" AT TIME ZONE 'UTC') AS "endTime", "durationSec",
  request, persona, state, log, ("hangupRequestedAt" AT TIME ZONE 'UTC') AS "hangupRequestedAt", redirect`;

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

export function twilioTwinCallStore(db: Database) {
  return {
    async read(sid: string): Promise<TwilioTwinCall | null> {
      const [row] = await db.sql<TwilioTwinCall>(
        { name: 'twilio_twin_call', text: `SELECT ${CALL_COLUMNS} FROM "TwilioTwinCall" WHERE sid = $1` },
        sid,
      );
      return row ?? null;
    },

    /** The call and its first callback in one statement: queued, dialed at once (its start_time is its creation). */
    async create(call: NewCall): Promise<TwilioTwinCall> {
      const [row] = await db.sql<TwilioTwinCall>(
        {
          name: 'twilio_twin_call_create',
          text: `WITH created AS (
                   INSERT INTO "TwilioTwinCall" (sid, "accountSid", "to", "from", status, "createdAt", "updatedAt", "startTime",
                                                 request, persona, state)
                   VALUES ($1, $2, $3, $4, 'queued', ($5::timestamptz AT TIME ZONE 'UTC'), ($5::timestamptz AT TIME ZONE 'UTC'),
                           ($5::timestamptz AT TIME ZONE 'UTC'), $6::jsonb, $7::jsonb, $8::jsonb)
                   RETURNING ${CALL_COLUMNS}
                 ), initiated AS (
                   INSERT INTO "TwilioTwinCallback" ("callSid", seq, url, method, params)
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
      const [row] = await db.sql<TwilioTwinCall>(
        {
          name: 'twilio_twin_call_commit',
          text: `WITH updated AS (
                   UPDATE "TwilioTwinCall" SET
                     status = CASE WHEN $2::jsonb ? 'status' THEN $2::jsonb->>'status' ELSE status END,
                     "answeredBy" = CASE WHEN $2::jsonb ? 'answeredBy' THEN $2::jsonb->>'answeredBy' ELSE "answeredBy" END,
                     "endTime" = CASE WHEN $2::jsonb ? 'endTime'
                                      THEN (($2::jsonb->>'endTime')::timestamptz AT TIME ZONE 'UTC') ELSE "endTime" END,
                     "durationSec" = CASE WHEN $2::jsonb ? 'durationSec' THEN ($2::jsonb->>'durationSec')::int ELSE "durationSec" END,
                     state = $3::jsonb, log = $4::jsonb, "updatedAt" = (now() AT TIME ZONE 'UTC')
                    WHERE sid = $1
                   RETURNING ${CALL_COLUMNS}
                 ), owed AS (
                   INSERT INTO "TwilioTwinCallback" ("callSid", seq, url, method, params)
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
      db.sql<OwedCallback>(
        {
          name: 'twilio_twin_callbacks_owed',
          text: `SELECT seq, url, method, params FROM "TwilioTwinCallback"
                  WHERE "callSid" = $1 AND "deliveredAt" IS NULL ORDER BY seq`,
        },
        sid,
      ),

    delivered: (sid: string, seq: number) =>
      db.sql(
        {
          name: 'twilio_twin_callback_delivered',
          text: `UPDATE "TwilioTwinCallback" SET "deliveredAt" = (now() AT TIME ZONE 'UTC') WHERE "callSid" = $1 AND seq = $2`,
        },
        sid,
        seq,
      ),
  };
}
