import { type TwinSql, twinSchemaBatch } from '../twin-common/sql';

/**
 * The Telnyx twin's own durable record, in a PostgreSQL schema of its own (`telnyx_twin`), not in the product's
 * (prisma/schema.prisma): a call (its dial, state, the commands the REST API queued, what each side said) and the
 * webhooks it owes, so that a twin killed mid-call goes on with it after a restart. Made at start
 * (ensureTelnyxTwinTables), idempotently.
 */
export const TELNYX_TWIN_SCHEMA = 'telnyx_twin';
export const TELNYX_TWIN_TABLES = {
  calls: `${TELNYX_TWIN_SCHEMA}.calls`,
  webhooks: `${TELNYX_TWIN_SCHEMA}.webhooks`,
  /** The accounts' numbers and Call Control applications (incoming-numbers.ts): where an incoming call is announced. */
  phoneNumbers: `${TELNYX_TWIN_SCHEMA}.phone_numbers`,
  applications: `${TELNYX_TWIN_SCHEMA}.applications`,
};
const { calls: CALLS, webhooks: WEBHOOKS } = TELNYX_TWIN_TABLES;

/** A call the twin placed with Call Control's dial. */
export interface TelnyxTwinCall {
  /** Telnyx's call_control_id (v3:...). */
  callControlId: string;
  callLegId: string;
  callSessionId: string;
  /** The twin's account the dial was made by (its API key's): another account's key finds no call. */
  account: string;
  connectionId: string;
  /** The dial's command_id: a dial sent again with it answers this call and places none. */
  commandId: string | null;
  to: string;
  from: string;
  /** The twin's own: dialing, ringing, answered, hangup (Telnyx shows is_alive). */
  status: string;
  hangupCause: string | null;
  /** What answering-machine detection found (Telnyx's result), when it ran. */
  amdResult: string | null;
  /** The client_state of the webhooks to come (the dial's, or the last command's that set one). */
  clientState: string | null;
  createdAt: Date;
  updatedAt: Date;
  answeredAt: Date | null;
  endTime: Date | null;
  /** Seconds from the answer to the end (Telnyx's call_duration); null until an answered call ends. */
  durationSec: number | null;
  /** What the dial asked for (webhook URL, timeouts, answering_machine_detection). */
  request: unknown;
  /** The persona scripted for the number when it was dialed (test control), or null for the default persona. */
  persona: unknown;
  /** Where the call's life is: its next step, the audio queue, transcription, detection (calls.ts). */
  state: unknown;
  /** Commands accepted by the REST API, in order ({ seq, name, params, commandId }); the call's loop takes them. */
  commands: unknown[];
  /** What each side said and did, in order (GET /control/calls/{id}/log). */
  log: unknown;
}

/** What a step changes on the call's columns besides its state and log. */
export interface CallPatch {
  status?: string;
  hangupCause?: string | null;
  amdResult?: string | null;
  clientState?: string | null;
  answeredAt?: Date;
  endTime?: Date;
  durationSec?: number | null;
}

/** A webhook owed, as written with the step that caused it. */
export interface OwedWebhook {
  seq: number;
  url: string;
  method: string;
  /** The event ({ data: { event_type, id, occurred_at, payload, record_type } }), sent as JSON. */
  event: Record<string, unknown>;
}

const SCHEMA_SQL = twinSchemaBatch(
  TELNYX_TWIN_SCHEMA,
  `
CREATE TABLE IF NOT EXISTS ${CALLS} (
  "callControlId" text PRIMARY KEY,
  "callLegId" text NOT NULL,
  "callSessionId" text NOT NULL,
  account text NOT NULL,
  "connectionId" text NOT NULL,
  "commandId" text,
  "to" text NOT NULL,
  "from" text NOT NULL,
  status text NOT NULL,
  "hangupCause" text,
  "amdResult" text,
  "clientState" text,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "updatedAt" timestamptz NOT NULL DEFAULT now(),
  "answeredAt" timestamptz,
  "endTime" timestamptz,
  "durationSec" integer,
  request jsonb NOT NULL,
  persona jsonb,
  state jsonb NOT NULL,
  commands jsonb NOT NULL DEFAULT '[]',
  log jsonb NOT NULL DEFAULT '[]',
  UNIQUE (account, "commandId")
);
CREATE INDEX IF NOT EXISTS calls_account_created_idx ON ${CALLS} (account, "createdAt");
CREATE TABLE IF NOT EXISTS ${WEBHOOKS} (
  "callControlId" text NOT NULL REFERENCES ${CALLS} ("callControlId") ON DELETE CASCADE,
  seq integer NOT NULL,
  url text NOT NULL,
  method text NOT NULL,
  event jsonb NOT NULL,
  "deliveredAt" timestamptz,
  PRIMARY KEY ("callControlId", seq)
);
CREATE TABLE IF NOT EXISTS ${TELNYX_TWIN_TABLES.phoneNumbers} (
  id text PRIMARY KEY,
  account text NOT NULL,
  "phoneNumber" text NOT NULL UNIQUE,
  "connectionId" text,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "updatedAt" timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${TELNYX_TWIN_TABLES.applications} (
  id text PRIMARY KEY,
  account text NOT NULL,
  "applicationName" text NOT NULL,
  "webhookEventUrl" text,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "updatedAt" timestamptz NOT NULL DEFAULT now()
);
`,
);

export async function ensureTelnyxTwinTables(sql: TwinSql): Promise<void> {
  await sql(SCHEMA_SQL);
}

/** The columns a step may change, as CallPatch names them. */
const PATCHED = {
  status: "status = $2::jsonb->>'status'",
  hangupCause: '"hangupCause" = $2::jsonb->>\'hangupCause\'',
  amdResult: '"amdResult" = $2::jsonb->>\'amdResult\'',
  clientState: '"clientState" = $2::jsonb->>\'clientState\'',
  answeredAt: '"answeredAt" = ($2::jsonb->>\'answeredAt\')::timestamptz',
  endTime: '"endTime" = ($2::jsonb->>\'endTime\')::timestamptz',
  durationSec: '"durationSec" = ($2::jsonb->>\'durationSec\')::int',
} as const satisfies Record<keyof CallPatch, string>;

export function telnyxTwinCallStore(sql: TwinSql) {
  return {
    async read(callControlId: string): Promise<TelnyxTwinCall | null> {
      const [row] = await sql<TelnyxTwinCall>(`SELECT * FROM ${CALLS} WHERE "callControlId" = $1`, callControlId);
      return row ?? null;
    },

    async byCommandId(account: string, commandId: string): Promise<TelnyxTwinCall | null> {
      const [row] = await sql<TelnyxTwinCall>(
        `SELECT * FROM ${CALLS} WHERE account = $1 AND "commandId" = $2`,
        account,
        commandId,
      );
      return row ?? null;
    },

    /** The call and its first webhook (call.initiated) in one statement. A command_id already used: unique violation. */
    async create(
      call: Omit<
        TelnyxTwinCall,
        'hangupCause' | 'amdResult' | 'answeredAt' | 'endTime' | 'durationSec' | 'commands' | 'log' | 'updatedAt'
      >,
      initiated: Omit<OwedWebhook, 'seq'>,
    ): Promise<TelnyxTwinCall> {
      const [row] = await sql<TelnyxTwinCall>(
        `WITH created AS (
           INSERT INTO ${CALLS} ("callControlId", "callLegId", "callSessionId", account, "connectionId", "commandId", "to",
                                 "from", status, "clientState", "createdAt", "updatedAt", request, persona, state)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12::jsonb, $13::jsonb, $14::jsonb)
           RETURNING *
         ), initiated AS (
           INSERT INTO ${WEBHOOKS} ("callControlId", seq, url, method, event)
           SELECT "callControlId", 0, $15, $16, $17::jsonb FROM created
         )
         SELECT * FROM created`,
        call.callControlId,
        call.callLegId,
        call.callSessionId,
        call.account,
        call.connectionId,
        call.commandId,
        call.to,
        call.from,
        call.status,
        call.clientState,
        call.createdAt,
        JSON.stringify(call.request),
        call.persona === null || call.persona === undefined ? null : JSON.stringify(call.persona),
        JSON.stringify(call.state),
        initiated.url,
        initiated.method,
        JSON.stringify(initiated.event),
      );
      return row!;
    },

    /** A step committed: the call's columns, state and log, and the webhooks it owes, in one statement. */
    async commit(
      callControlId: string,
      change: { patch: CallPatch; state: unknown; log: unknown; webhooks: OwedWebhook[] },
    ): Promise<TelnyxTwinCall> {
      const sets = (Object.keys(change.patch) as (keyof CallPatch)[])
        .filter((column) => change.patch[column] !== undefined)
        .map((column) => PATCHED[column]);
      const [row] = await sql<TelnyxTwinCall>(
        `WITH updated AS (
           UPDATE ${CALLS} SET ${[...sets, 'state = $3::jsonb', 'log = $4::jsonb', '"updatedAt" = now()'].join(', ')}
            WHERE "callControlId" = $1 AND $2::jsonb IS NOT NULL -- $2 typed even when the step patches no column
           RETURNING *
         ), owed AS (
           INSERT INTO ${WEBHOOKS} ("callControlId", seq, url, method, event)
           SELECT $1, w.seq, w.url, w.method, w.event
             FROM jsonb_to_recordset($5::jsonb) AS w(seq int, url text, method text, event jsonb)
         )
         SELECT * FROM updated`,
        callControlId,
        JSON.stringify(change.patch),
        JSON.stringify(change.state),
        JSON.stringify(change.log),
        JSON.stringify(change.webhooks),
      );
      if (!row) throw new Error(`telnyx twin: call ${callControlId} is gone`);
      return row;
    },

    /**
     * The call's command queue replaced by `commands`, if no other command was queued since it was read with
     * `length` commands: false when one was (the caller reads the call again and decides again).
     */
    async queueCommands(callControlId: string, length: number, commands: unknown[]): Promise<boolean> {
      const rows = await sql(
        `UPDATE ${CALLS} SET commands = $3::jsonb, "updatedAt" = now()
          WHERE "callControlId" = $1 AND jsonb_array_length(commands) = $2 RETURNING 1`,
        callControlId,
        length,
        JSON.stringify(commands),
      );
      return rows.length === 1;
    },

    /**
     * Appends a command to the call's queue, whatever was queued meanwhile (read again until the write holds); false
     * when the call is not there.
     */
    async appendCommand(callControlId: string, command: Record<string, unknown>): Promise<boolean> {
      for (;;) {
        const [row] = await sql<{ commands: unknown[] }>(
          `SELECT commands FROM ${CALLS} WHERE "callControlId" = $1`,
          callControlId,
        );
        if (!row) return false;
        const commands = row.commands;
        if (
          await this.queueCommands(callControlId, commands.length, [...commands, { ...command, seq: commands.length }])
        )
          return true;
      }
    },

    /** The call's webhooks not yet delivered, in order. */
    owed: (callControlId: string) =>
      sql<OwedWebhook>(
        `SELECT seq, url, method, event FROM ${WEBHOOKS} WHERE "callControlId" = $1 AND "deliveredAt" IS NULL ORDER BY seq`,
        callControlId,
      ),

    delivered: (callControlId: string, seq: number) =>
      sql(`UPDATE ${WEBHOOKS} SET "deliveredAt" = now() WHERE "callControlId" = $1 AND seq = $2`, callControlId, seq),

    /** Calls not yet ended: a restarted twin goes on with them. */
    async live(ended: string): Promise<string[]> {
      const rows = await sql<{ callControlId: string }>(
        `SELECT "callControlId" FROM ${CALLS} WHERE status <> $1`,
        ended,
      );
      return rows.map((row) => row.callControlId);
    },

    /** Calls that owe a webhook, with their account: a restarted twin delivers them. */
    owing: () =>
      sql<{ callControlId: string; account: string }>(
        `SELECT DISTINCT w."callControlId", c.account FROM ${WEBHOOKS} w JOIN ${CALLS} c USING ("callControlId")
          WHERE w."deliveredAt" IS NULL`,
      ),
  };
}
