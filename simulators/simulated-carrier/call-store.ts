import { type TwinSql, twinSchemaBatch } from '../twin-common/sql';

/**
 * The simulated carrier's own durable record, in a PostgreSQL schema of its own (`simulated_carrier`), not in the
 * product's (prisma/schema.prisma): a dialed call, so that lookup and event delivery go on after a restart. Made at
 * start (ensureSimulatedCarrierTables), idempotently; the migration simulated_carrier_own_schema made the same table
 * and moved the calls the product's schema held (table SimulatedProviderCall) into it. Columns keep the names the
 * carrier's code reads (row.providerCallId, row.createdAt).
 */
export const SIMULATED_CARRIER_SCHEMA = 'simulated_carrier';
export const SIMULATED_CARRIER_TABLES = { calls: `${SIMULATED_CARRIER_SCHEMA}.calls` };
const { calls: CALLS } = SIMULATED_CARRIER_TABLES;

/** A call dialed on the carrier. */
export interface SimulatedCarrierCall {
  attemptId: string;
  providerCallId: string;
  to: string;
  /** The outcome the number scripts (timeline.ts), and the talk time of an answered call. */
  outcome: string;
  durationMs: number;
  createdAt: Date;
  /** Where it POSTs the call's signed status events. */
  statusCallbackUrl: string | null;
  fromNumber: string | null;
  /** What the dial named: the agent and the lead, for the call's transcript. */
  agent: unknown;
  lead: unknown;
  /** Status events delivered so far (each is retried until answered 2xx): a restarted carrier goes on from here. */
  eventsDelivered: number;
  /** The progress states the dial asked to be told of besides the terminal one; null: all. */
  statusCallbackEvents: string[] | null;
  /** POST /calls/{id}/hangup: the call ends canceled at this time unless it had ended before. */
  hangupAt: Date | null;
}

// Its lock also serialises a carrier starting with the migration on one database.
const SCHEMA_SQL = twinSchemaBatch(
  SIMULATED_CARRIER_SCHEMA,
  `
CREATE TABLE IF NOT EXISTS ${CALLS} (
  "attemptId" text PRIMARY KEY,
  "providerCallId" text NOT NULL UNIQUE,
  "to" text NOT NULL,
  outcome text NOT NULL,
  "durationMs" integer NOT NULL,
  "createdAt" timestamptz NOT NULL DEFAULT now(),
  "statusCallbackUrl" text,
  "fromNumber" text,
  agent jsonb,
  lead jsonb,
  "eventsDelivered" integer NOT NULL DEFAULT 0,
  "statusCallbackEvents" jsonb,
  "hangupAt" timestamptz
);
`,
);

export async function ensureSimulatedCarrierTables(sql: TwinSql): Promise<void> {
  await sql(SCHEMA_SQL);
}

/** What a dial records. */
export interface NewSimulatedCarrierCall {
  attemptId: string;
  providerCallId: string;
  to: string;
  fromNumber: string | null;
  outcome: string;
  durationMs: number;
  statusCallbackUrl: string;
  agent: unknown;
  lead: unknown;
  statusCallbackEvents: readonly string[] | undefined;
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/** The carrier's statements, over its own table. */
export function simulatedCarrierStore(sql: TwinSql) {
  const one = async (condition: string, value: string): Promise<SimulatedCarrierCall | null> =>
    (await sql<SimulatedCarrierCall>(`SELECT * FROM ${CALLS} WHERE ${condition} = $1`, value))[0] ?? null;
  return {
    /**
     * The dial recorded once per attempt id, in one statement (a second dial of the attempt inserts nothing and reads
     * the first); a concurrent dial of the same attempt committed after this statement's snapshot is read after it.
     */
    async recordDial(call: NewSimulatedCarrierCall): Promise<SimulatedCarrierCall> {
      const [row] = await sql<SimulatedCarrierCall>(
        {
          name: 'simulated_carrier_dial',
          text: `WITH created AS (
                   INSERT INTO ${CALLS} ("attemptId", "providerCallId", "to", "fromNumber", outcome, "durationMs",
                                         "statusCallbackUrl", agent, lead, "statusCallbackEvents")
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb)
                   ON CONFLICT ("attemptId") DO NOTHING
                   RETURNING *
                 )
                 SELECT * FROM created
                 UNION ALL SELECT * FROM ${CALLS} WHERE "attemptId" = $1 AND NOT EXISTS (SELECT 1 FROM created)`,
        },
        call.attemptId,
        call.providerCallId,
        call.to,
        call.fromNumber,
        call.outcome,
        call.durationMs,
        call.statusCallbackUrl,
        json(call.agent),
        json(call.lead),
        json(call.statusCallbackEvents),
      );
      return row ?? (await one('"attemptId"', call.attemptId))!;
    },
    byProviderCallId: (providerCallId: string) => one('"providerCallId"', providerCallId),
    byAttemptId: (attemptId: string) => one('"attemptId"', attemptId),
    async setEventsDelivered(providerCallId: string, eventsDelivered: number): Promise<void> {
      await sql(
        {
          name: 'simulated_carrier_delivered',
          text: `UPDATE ${CALLS} SET "eventsDelivered" = $2 WHERE "providerCallId" = $1`,
        },
        providerCallId,
        eventsDelivered,
      );
    },
    /** Calls with status events possibly still owed (no timeline has more than 5): a restarted carrier goes on. */
    owingEvents: () =>
      sql<SimulatedCarrierCall>(
        `SELECT * FROM ${CALLS} WHERE "statusCallbackUrl" IS NOT NULL AND "eventsDelivered" < 5 ORDER BY "createdAt"`,
      ),
    /** The hangup written unless one was before: the call as it is now. */
    async hangUp(providerCallId: string, hangupAt: Date): Promise<SimulatedCarrierCall | null> {
      const [row] = await sql<SimulatedCarrierCall>(
        `UPDATE ${CALLS} SET "hangupAt" = coalesce("hangupAt", $2) WHERE "providerCallId" = $1 RETURNING *`,
        providerCallId,
        hangupAt,
      );
      return row ?? null;
    },
  };
}
