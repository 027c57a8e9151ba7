import type { TranscriptTurn } from '../calls/transcript';
import type { Carrier, CarrierCallSnapshot } from '../calls/carrier';
import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { CARRIER_PROVIDERS, requireKeyring, type OpenedCarrierConnection } from '../carrier-connections/connections';
import { openedConnectionsOf } from '../carrier-connections/opened-connections';
import type { CarrierCallState } from '../calls/call-states';
import { createTelnyxCalls } from './telnyx/telnyx-calls';
import type { TelnyxConnection } from './telnyx/telnyx-client';
import { createTwilioCalls } from './twilio/twilio-calls';

/**
 * The connection a call was recorded on is removed (or unknown): nothing can be placed, looked up or hung up through it
 * any more, and the call is never moved to another carrier (its connection is the one recorded with it).
 */
export class CarrierConnectionRemovedError extends Error {
  constructor(readonly connectionId: string) {
    super(`carrier connection ${connectionId} is removed or unknown`);
    this.name = 'CarrierConnectionRemovedError';
  }
}

/** What the routing reads of a call: its connection, and what a lost dial answer is looked for with. */
interface ConnectionCallRow {
  attemptId: string;
  provider: string;
  carrierConnectionId: string | null;
  providerCallId: string | null;
  carrierStatus: string | null;
  toNumber: string | null;
  fromNumber: string | null;
  startedAt: Date;
}

/** One connection's calls through its carrier's adapter, as the routing uses them. */
interface ConnectionCalls {
  dial: Carrier['dial'];
  /** The call by its carrier id, or, without one, the call the carrier placed for the attempt (null: none). */
  lookup(
    call: ConnectionCallRow,
    othersOf: (ids: string[]) => Promise<{ held: Set<string>; unboundOthers: number }>,
  ): Promise<CarrierCallSnapshot | null>;
  hangup(call: ConnectionCallRow): Promise<void>;
}

const CALL_COLUMNS = `"attemptId", provider, "carrierConnectionId"::text, "providerCallId", "carrierStatus", "toNumber", "fromNumber",
  -- Stored as UTC wall-clock time without a zone: read back as an instant.
  ("startedAt" AT TIME ZONE 'UTC') AS "startedAt"`;

/**
 * The Carrier the worker places every call through (lib/providers.ts): a call recorded on a carrier connection (its
 * caller number's, Call.carrierConnectionId) goes to that account through its adapter; any other call goes to
 * `fallback`, the simulated carrier, as before connections existed. The connection is opened (its secrets
 * decrypted) for each operation and dropped after it; its secrets never reach a workflow's input or history.
 * `name` is the fallback's: a call on a connection records the connection's provider instead (lib/calls/call-lines.ts).
 */
export function createConnectionCarrier({
  db,
  keyring,
  fallback,
  publicBaseUrl,
}: {
  db: Database;
  /** SECRETS_KEYS; unset, a call on a connection fails naming the variable (the simulated calls go on). */
  keyring: Keyring | undefined;
  fallback: Carrier;
  /** PUBLIC_BASE_URL: the API as the carrier reaches it, where its callbacks and TwiML requests go. */
  publicBaseUrl: string;
}): Carrier {
  /**
   * The adapter of the connection's carrier, by its provider: Twilio's (twilio, twilio-twin) or Telnyx's (telnyx,
   * telnyx-twin). A twin's connection differs from the real one by its base URL and credentials only. Each adapter is
   * kept while its connection reads the same, so that its SDK client and that client's kept-alive HTTP connections
   * serve the next call too: keyed by the opened secrets (one object per envelope, lib/carrier-connections/connections.ts), a
   * rotated or re-keyed connection gets a new one, as does a new base URL.
   */
  const adapters = new WeakMap<object, { baseUrl: string; calls: ConnectionCalls }>();
  const callsOf = async (connectionId: string): Promise<ConnectionCalls> => {
    // Kept for a few seconds (lib/carrier-connections/opened-connections.ts): a removed connection still places nothing more, as
    // taking a line reads its liveness in the same statement that records the call (lib/calls/call-lines.ts).
    const { connection } = await openedConnectionsOf(db, requireKeyring(keyring)).get(connectionId);
    if (!connection) throw new CarrierConnectionRemovedError(connectionId);
    const kept = adapters.get(connection.secrets);
    if (kept?.baseUrl === connection.baseUrl) return kept.calls;
    const calls = adapterOf(connection);
    adapters.set(connection.secrets, { baseUrl: connection.baseUrl, calls });
    return calls;
  };
  const adapterOf = (connection: OpenedCarrierConnection): ConnectionCalls => {
    if (connection.provider === 'twilio' || connection.provider === 'twilio-twin') {
      const calls = createTwilioCalls(connection, { publicBaseUrl });
      return {
        dial: (request) => calls.dial(request),
        lookup: (call, othersOf) =>
          call.providerCallId
            ? calls.fetch(call.providerCallId, call.attemptId)
            : calls.findCallOfAttempt({
                attemptId: call.attemptId,
                to: call.toNumber!,
                from: call.fromNumber,
                recordedAt: call.startedAt,
                othersOf,
              }),
        hangup: (call) => calls.hangup(call.providerCallId!, call.carrierStatus),
      };
    }
    const calls = createTelnyxCalls(connection as TelnyxConnection, { publicBaseUrl });
    return {
      dial: (request) => calls.dial(request),
      // Call Control cannot list calls: an attempt without its call_control_id is dialed again with the same
      // command_id, which Telnyx ignores (docs/features/carriers/telnyx.md#a-telnyx-dial-whose-answer-is-lost).
      lookup: async (call) =>
        call.providerCallId
          ? calls.fetch(call.providerCallId, call.attemptId, call.carrierStatus as CarrierCallState | null)
          : null,
      hangup: (call) => calls.hangup(call.providerCallId!),
    };
  };
  const callByAttempt = async (attemptId: string) =>
    (await db.sql<ConnectionCallRow>(`SELECT ${CALL_COLUMNS} FROM "Call" WHERE "attemptId" = $1`, attemptId))[0];
  /** A call on a connection by the carrier's id (by the index of provider and providerCallId); none: the fallback's. */
  const connectionCallById = async (providerCallId: string) =>
    (
      await db.sql<ConnectionCallRow>(
        `SELECT ${CALL_COLUMNS} FROM "Call"
          WHERE provider = ANY($1::text[]) AND "providerCallId" = $2 AND "carrierConnectionId" IS NOT NULL
          ORDER BY "startedAt" DESC LIMIT 1`,
        [...CARRIER_PROVIDERS],
        providerCallId,
      )
    )[0];
  /**
   * What other attempts of the connection say about the calls Twilio listed for this one: the CallSids they hold, and
   * how many of them, to the same number from the same caller, are still dialing without a CallSid (their dial's
   * answer lost too, or not yet recorded): any listed call may be theirs.
   */
  const othersOf = (call: ConnectionCallRow) => async (callSids: string[]) => {
    const [row] = await db.sql<{ held: string[]; unbound: number }>(
      `SELECT coalesce((SELECT array_agg("providerCallId") FROM "Call"
                         WHERE provider = $1 AND "providerCallId" = ANY($2::text[]) AND "attemptId" <> $3), '{}') AS held,
              (SELECT count(*)::int FROM "Call"
                WHERE "carrierConnectionId" = $4::uuid AND "toNumber" = $5 AND "fromNumber" IS NOT DISTINCT FROM $6
                  AND status = 'dialing' AND "providerCallId" IS NULL AND "attemptId" <> $3) AS unbound`,
      call.provider,
      callSids,
      call.attemptId,
      call.carrierConnectionId,
      call.toNumber,
      call.fromNumber,
    );
    return { held: new Set(row!.held), unboundOthers: row!.unbound };
  };

  return {
    name: fallback.name,
    async dial(request) {
      if (!request.carrierConnectionId) return fallback.dial(request);
      return (await callsOf(request.carrierConnectionId)).dial(request);
    },
    async lookup(reference): Promise<CarrierCallSnapshot | null> {
      const call =
        'attemptId' in reference
          ? await callByAttempt(reference.attemptId)
          : await connectionCallById(reference.providerCallId);
      if (!call?.carrierConnectionId) return fallback.lookup(reference);
      const calls = await callsOf(call.carrierConnectionId);
      const providerCallId = 'providerCallId' in reference ? reference.providerCallId : call.providerCallId;
      return calls.lookup({ ...call, providerCallId }, othersOf(call));
    },
    async hangup(providerCallId) {
      const call = await connectionCallById(providerCallId);
      if (!call) return fallback.hangup(providerCallId);
      await (await callsOf(call.carrierConnectionId!)).hangup({ ...call, providerCallId });
    },
    async transcript(providerCallId) {
      // What was said on a carrier's call is what the product's own TwiML said and heard (the agent's script walk,
      // api/carriers/twilio-callbacks.ts): its stored turns, in step order. None stored: no transcript (yet).
      const call = await connectionCallById(providerCallId);
      if (!call) return fallback.transcript(providerCallId);
      const turns = await db.sql<{
        speaker: 'agent' | 'lead' | 'tool';
        text: string;
        confidence: number | null;
        offsetMs: number;
        tool: TranscriptTurn['tool'] | null;
      }>(
        `SELECT t.speaker, t.text, t.confidence, t."offsetMs", t.tool FROM "CallTurn" t JOIN "Call" c ON c.id = t."callId"
          WHERE c."attemptId" = $1 ORDER BY t.step, t.part`,
        call.attemptId,
      );
      if (turns.length === 0) return null;
      // A tool the agent used (docs/features/conversation/tools.md) is a turn of its own: its name, arguments, result.
      return turns.map(({ speaker, text, confidence, offsetMs, tool }) => ({
        speaker,
        text,
        offsetMs,
        ...(confidence !== null && { confidence }),
        ...(tool !== null && { tool }),
      }));
    },
  };
}
