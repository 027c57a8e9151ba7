import { endCall, HAND_OVER_LINES_CTES, type GrantedLine } from './call-lines';
import { NOW_UTC } from '../sql-clock';
import { PICKED_UP_OUTCOMES, sqlOutcomeList, type CallOutcome } from './call-outcomes';
import type { Database } from '../database';
import type { RunSql } from '../run-sql';
import { LEAD_STATUS_OPEN_SQL } from '../leads/lead-final-status';
import type { CallEvent } from './call-event';
import { CARRIER_CALL_STATES, callStateRank, isTerminalCallState, type CarrierCallState } from './call-states';
import type { EndedCall } from './ended-call';
import { callsPlaced } from '../metrics/calls';

/**
 * How a terminal carrier state becomes the call's outcome (docs/features/calls.md#telephony-the-carrier-path,
 * "Outcomes"): completed by a human -> answered, by a machine -> voicemail (unknown: answered; voicemail_left, in
 * applyCallEvents' statement, when the agent's voicemail message was left: Call.voicemailLeftAt); busy -> busy; no-answer
 * -> no_answer; failed -> invalid_number when the carrier's reason says so, else failed; canceled (we hung up: the
 * campaign was stopped) -> what the call had reached: answered or voicemail once picked up, no_answer while it was
 * still ringing.
 *
 * `answerServed` false says the product never served the call's answer document (no step-0 turn), which only means
 * something for a call with an agent on a carrier that walks the script from the answer (Twilio's TwiML:
 * walksFromAnswer, ANSWER_NEVER_SERVED_SQL): completed with nobody known to have answered is then failed, not
 * answered, since nobody heard the agent (Twilio's error 11200, the TwiML request failed:
 * docs/features/carriers/twilio.md#outcomes-twilios-words-in-the-products). A human or a machine detected keeps its outcome.
 */
export function outcomeOfTerminalState(
  status: CarrierCallState,
  answeredBy: 'human' | 'machine' | null,
  reason: string | null,
  answerServed = true,
): CallOutcome {
  switch (status) {
    case 'completed':
      return answeredBy === 'machine' ? 'voicemail' : answeredBy === null && !answerServed ? 'failed' : 'answered';
    case 'busy':
      return 'busy';
    case 'failed':
      return reason === 'invalid_number' ? 'invalid_number' : 'failed';
    case 'canceled':
      return answeredBy === 'machine' ? 'voicemail' : answeredBy === 'human' ? 'answered' : 'no_answer';
    default:
      return 'no_answer';
  }
}

export type AppliedCallEvent =
  | { found: false }
  | {
      found: true;
      /** The event moved the call (false: a duplicate, or late, or out of order). */
      applied: boolean;
      /** The call has ended (by this event or before): its waiting workflow is to be told. */
      ended: EndedCall | null;
      workflowId: string | null;
      /** The queued attempts the ended call's line was handed to: their workflows are to be woken. */
      handedOver: GrantedLine[];
    };

interface AppliedRow {
  ord: string;
  id: string;
  attemptId: string;
  workflowId: string | null;
  applied: boolean;
  status: string;
  outcome: string | null;
  durationMs: number | null;
  leadSettled: boolean;
  callbackAt: string | null;
  handedOver: GrantedLine[];
}

/** The rank of "carrierStatus" in SQL, from the one table of ranks (lib/calls/call-states.ts). */
const RANK_SQL = `CASE c."carrierStatus" ${CARRIER_CALL_STATES.map((state) => `WHEN '${state}' THEN ${callStateRank(state)}`).join(' ')} ELSE 0 END`;

/**
 * The call c has an agent, so its answer document stores step-0 turns (api/carriers/script-calls.ts storeScriptTurns,
 * before the document is answered), and has none: the product never served its answer. A call without an agent stores
 * no turn ever (its TwiML hangs up at once), and is not told apart. One index lookup (CallTurn's key starts with
 * callId, step).
 */
const ANSWER_NEVER_SERVED_SQL = `c."agentId" IS NOT NULL
                                  AND NOT EXISTS (SELECT 1 FROM "CallTurn" t WHERE t."callId" = c.id AND t.step = 0)`;

/**
 * Whether a provider's calls walk the agent's script from the answer, so that an answer never served means nobody heard
 * the agent: Twilio's (the TwiML Url is fetched at the answer). Not Telnyx's (its walk starts at the detection's end: a
 * person who hangs up before stores no turn either), nor the simulated carrier's (no TwiML).
 */
const walksFromAnswer = (provider: string): boolean => provider === 'twilio' || provider === 'twilio-twin';

/** The outcome of the carrier's terminal state alone. */
const BASE_TERMINAL_OUTCOME_SQL = `(CASE coalesce(last_applied."answeredBy", c."answeredBy")
                       WHEN 'human' THEN input."outcomeIfHuman"
                       -- A machine that took the agent's voicemail message (lib/carriers/twilio/twiml.ts).
                       WHEN 'machine' THEN (CASE WHEN input."outcomeIfMachine" = 'voicemail' AND c."voicemailLeftAt" IS NOT NULL
                                                 THEN 'voicemail_left' ELSE input."outcomeIfMachine" END)
                       -- Nobody known to have answered: outcomeIfUnserved (set only where it differs, a completed
                       -- call of a carrier whose walk starts at the answer) when the answer was never served.
                       ELSE (CASE WHEN input."outcomeIfUnserved" IS NOT NULL AND ${ANSWER_NEVER_SERVED_SQL}
                                  THEN input."outcomeIfUnserved" ELSE input."outcomeIfUnknown" END) END)`;

/**
 * The outcome a terminal event gives its call c (in APPLY_EVENTS_SQL's update, where last_applied and input join it).
 * An answered call whose conversation's tools gave it an outcome (Call.conversationOutcome: opted_out,
 * callback_requested, transferred; docs/features/conversation/tools.md) ends with that one.
 */
const TERMINAL_OUTCOME_SQL = `(CASE WHEN c."conversationOutcome" IS NOT NULL AND ${BASE_TERMINAL_OUTCOME_SQL} = 'answered'
                                 THEN c."conversationOutcome" ELSE ${BASE_TERMINAL_OUTCOME_SQL} END)`;

/** A callback time (timestamp, UTC) as ISO 8601 text, "callbackAt". */
const CALLBACK_AT_TEXT = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "callbackAt"`;

/**
 * One SQL statement for a batch of events ($1: a JSON array, one element per event in arrival order, as
 * applyCallEvents builds it), with the outcome as if each had been applied alone, one after the other:
 * - each event's call found (by attemptId, or by providerCallId) and locked, in id order (two batches on the same
 *   calls wait for each other instead of deadlocking);
 * - the event recorded once per (provider, eventId) (a second delivery, in this batch or before, changes nothing);
 * - it moves its call when the call is dialing and the event ranks above the call's state and above every event
 *   before it of the same call in the batch (so a late or repeated one changes nothing, and nothing moves after a
 *   terminal event, which ranks top);
 * - each call is updated once, to the last event that moved it (answeredBy: the last one said), a terminal state
 *   ending it and releasing its campaign's line. The outcomes for each answeredBy the call may end with come worked
 *   out by outcomeOfTerminalState, so that the rule lives in one place.
 * Answers one row per event whose call was found, with the call as that event left it; the lines handed over in a
 * campaign go with the first of its events that freed one.
 */
const APPLY_EVENTS_SQL = (endsCalls: boolean) => `
  WITH input AS (
    SELECT e.ord, x.*
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(value, ord),
           jsonb_to_record(e.value) AS x(provider text, "providerCallId" text, "attemptId" text, rank int, "eventId" text,
             status text, "occurredAt" timestamptz, payload jsonb, "answeredBy" text, "outcomeIfHuman" text,
             "outcomeIfMachine" text, "outcomeIfUnknown" text, "outcomeIfUnserved" text, terminal boolean, "durationMs" int,
             "carrierConnectionId" uuid)
  ), found AS (
    SELECT input.ord, f.id FROM input CROSS JOIN LATERAL (
      SELECT c.id FROM "Call" c
       WHERE input."attemptId" IS NOT NULL AND c.provider = input.provider AND c."attemptId" = input."attemptId"
         AND (c."providerCallId" IS NULL OR c."providerCallId" = input."providerCallId")
         AND (input."carrierConnectionId" IS NULL OR c."carrierConnectionId" = input."carrierConnectionId")
      UNION ALL
      SELECT c.id FROM "Call" c
       WHERE input."attemptId" IS NULL AND c.provider = input.provider AND c."providerCallId" = input."providerCallId"
         AND (input."carrierConnectionId" IS NULL OR c."carrierConnectionId" = input."carrierConnectionId")
    ) f
  ), locked AS (
    SELECT c.id, c."attemptId", c."workflowId", c.status, c.outcome, c."durationMs", c."leadSettledAt", c."callbackAt",
           ${RANK_SQL} AS rank
      FROM "Call" c WHERE c.id IN (SELECT id FROM found)
     ORDER BY c.id
       FOR UPDATE
  ), seq AS (
    SELECT found.ord, found.id,
           locked.status = 'dialing' AND input.rank > greatest(locked.rank, coalesce(max(input.rank) OVER (
             PARTITION BY found.id ORDER BY found.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)) AS moves
      FROM found JOIN input ON input.ord = found.ord JOIN locked ON locked.id = found.id
  ), recorded AS (
    INSERT INTO "CallEvent" (id, provider, "eventId", "callId", status, applied, "occurredAt", payload)
    SELECT gen_random_uuid(), input.provider, input."eventId", seq.id, input.status, seq.moves,
           (input."occurredAt" AT TIME ZONE 'UTC'), input.payload
      FROM seq JOIN input ON input.ord = seq.ord
     ORDER BY seq.ord
    ON CONFLICT (provider, "eventId") DO NOTHING
    RETURNING provider, "eventId", "callId"
  ), applied AS (
    SELECT seq.ord, seq.id, input."answeredBy" FROM seq JOIN input ON input.ord = seq.ord
     WHERE seq.moves AND EXISTS (SELECT 1 FROM recorded
             WHERE recorded.provider = input.provider AND recorded."eventId" = input."eventId" AND recorded."callId" = seq.id)
  ), last_applied AS (
    SELECT id, max(ord) AS ord,
           (array_agg("answeredBy" ORDER BY ord DESC) FILTER (WHERE "answeredBy" IS NOT NULL))[1] AS "answeredBy"
      FROM applied GROUP BY id
  ), moved AS (
    UPDATE "Call" c
       SET "carrierStatus" = input.status, "answeredBy" = coalesce(last_applied."answeredBy", c."answeredBy"),
           "providerCallId" = input."providerCallId", "lastEventAt" = (input."occurredAt" AT TIME ZONE 'UTC'),
           status = CASE WHEN input.terminal THEN 'ended' ELSE c.status END,
           outcome = CASE WHEN input.terminal THEN ${TERMINAL_OUTCOME_SQL} ELSE c.outcome END,
           "durationMs" = CASE WHEN input.terminal THEN input."durationMs" ELSE c."durationMs" END,
           "endedAt" = CASE WHEN input.terminal THEN ${NOW_UTC} ELSE c."endedAt" END,
           -- The end settles the call's lead when its ladder said so for this outcome (Call.settlesLeadOn) and no
           -- result webhook is owed (the lead's workflow enqueues those): the lead's workflow is then told so.
           "leadSettledAt" = CASE WHEN input.terminal AND ${TERMINAL_OUTCOME_SQL} = ANY (c."settlesLeadOn") AND c."leadId" IS NOT NULL
                                   AND NOT EXISTS (SELECT 1 FROM "ResultWebhookEndpoint" e
                                                    WHERE e."workspaceId" = c."workspaceId" AND e."deletedAt" IS NULL)
                                  THEN ${NOW_UTC} ELSE c."leadSettledAt" END
      FROM last_applied JOIN input ON input.ord = last_applied.ord
     WHERE c.id = last_applied.id
    RETURNING c.id, last_applied.ord, c.status, c.outcome, c."durationMs", c."campaignId", c."leadId", c."leadSettledAt",
              c."callbackAt"
  )${
    endsCalls
      ? `, ended AS (
    SELECT * FROM moved WHERE moved.status = 'ended'
  ), settled_leads AS (
    -- As the lead's workflow would settle it (activities/dial-ladder/calls.ts settleLead): a call ends once, so
    -- a lead is settled here once, and never over a final status (a stop's cancelled, written before its hangup).
    UPDATE "Lead" l
       SET status = (CASE WHEN ended.outcome IN ${sqlOutcomeList(PICKED_UP_OUTCOMES)} THEN 'completed' ELSE 'failed' END)::"LeadStatus",
           "waitingFor" = NULL, "nextAttemptAt" = NULL, "updatedAt" = ${NOW_UTC}
      FROM ended WHERE l.id = ended."leadId" AND ended."leadSettledAt" IS NOT NULL AND ${LEAD_STATUS_OPEN_SQL('l')}
  ), freeing AS (
    SELECT ended."campaignId" AS campaign_id, count(*)::int AS freed, min(ended.ord) AS ord
      FROM ended WHERE ended."campaignId" IS NOT NULL
     GROUP BY ended."campaignId"
  ), ${HAND_OVER_LINES_CTES}
  SELECT seq.ord::text, seq.id::text, locked."attemptId", locked."workflowId",
         EXISTS (SELECT 1 FROM applied WHERE applied.ord = seq.ord AND applied.id = seq.id) AS applied,
         CASE WHEN ended.ord <= seq.ord THEN ended.status ELSE locked.status END AS status,
         CASE WHEN ended.ord <= seq.ord THEN ended.outcome ELSE locked.outcome END AS outcome,
         CASE WHEN ended.ord <= seq.ord THEN ended."durationMs" ELSE locked."durationMs" END AS "durationMs",
         CASE WHEN ended.ord <= seq.ord THEN ended."leadSettledAt" ELSE locked."leadSettledAt" END IS NOT NULL AS "leadSettled",
         ${CALLBACK_AT_TEXT('CASE WHEN ended.ord <= seq.ord THEN ended."callbackAt" ELSE locked."callbackAt" END')},
         coalesce((SELECT json_agg(granted_lines) FROM granted_lines JOIN freeing
                    ON granted_lines."campaignId" = freeing.campaign_id::text WHERE freeing.ord = seq.ord), '[]'::json)
           AS "handedOver"
    FROM seq JOIN locked ON locked.id = seq.id LEFT JOIN ended ON ended.id = seq.id`
      : `
  SELECT seq.ord::text, seq.id::text, locked."attemptId", locked."workflowId",
         EXISTS (SELECT 1 FROM applied WHERE applied.ord = seq.ord AND applied.id = seq.id) AS applied,
         locked.status, locked.outcome, locked."durationMs", locked."leadSettledAt" IS NOT NULL AS "leadSettled",
         ${CALLBACK_AT_TEXT('locked."callbackAt"')},
         '[]'::json AS "handedOver"
    FROM seq JOIN locked ON locked.id = seq.id`
  }
   ORDER BY seq.ord`;

/**
 * Named: on a pg pool each connection parses and plans a statement once, then only binds and executes it
 * (bench/intake.ts (b), docs/benchmarks/intake.md: the parse and plan of this CTE had been redone
 * at every event). One statement serves every batch size: the events travel as one JSON parameter. A batch with no
 * terminal event ends no call and frees no line: its statement leaves out the line hand-over, whose dozen plan
 * nodes every execution would start and stop for nothing.
 */
const APPLY_EVENTS = { name: 'apply_call_events', text: APPLY_EVENTS_SQL(true) };
const APPLY_PROGRESS_EVENTS = { name: 'apply_call_progress_events', text: APPLY_EVENTS_SQL(false) };

/** A carrier's event for applyCallEvents: the provider it came from and the event as the endpoint took it. */
export interface ProviderCallEvent {
  provider: string;
  event: CallEvent;
  /**
   * The carrier connection whose secret verified the event (its callback route names it): only a call placed through
   * it is found, so that one workspace's account cannot move another's call. Unset: the installation's own carrier.
   */
  carrierConnectionId?: string;
}

/**
 * Carrier events applied to their calls in one statement and one transaction (APPLY_EVENTS_SQL), answered in
 * their order: each recorded once per (provider, eventId) (a second delivery changes nothing), its call's state
 * moved only forward (lib/calls/call-states.ts), and a terminal state ending the call and releasing its line, once.
 * Events of the same call, and repeats of an event, may share a batch: each has the effect it would have had alone
 * after the ones before it.
 */
export async function applyCallEvents(sql: RunSql, events: readonly ProviderCallEvent[]): Promise<AppliedCallEvent[]> {
  const rows = await sql<AppliedRow>(
    events.some(({ event }) => isTerminalCallState(event.status)) ? APPLY_EVENTS : APPLY_PROGRESS_EVENTS,
    JSON.stringify(
      events.map(({ provider, event, carrierConnectionId }) => {
        const terminal = isTerminalCallState(event.status);
        const reason = event.reason ?? null;
        const outcomeIf = (answeredBy: 'human' | 'machine' | null, answerServed = true) =>
          outcomeOfTerminalState(event.status, event.answeredBy ?? answeredBy, reason, answerServed);
        const outcomeIfUnserved = walksFromAnswer(provider) ? outcomeIf(null, false) : null;
        return {
          provider,
          providerCallId: event.providerCallId,
          attemptId: event.attemptId ?? null,
          rank: callStateRank(event.status),
          eventId: event.eventId,
          status: event.status,
          occurredAt: event.occurredAt,
          payload: event,
          answeredBy: event.answeredBy ?? null,
          outcomeIfHuman: outcomeIf('human'),
          outcomeIfMachine: outcomeIf('machine'),
          outcomeIfUnknown: outcomeIf(null),
          // Only where it differs: the statement looks for the answer's turns for that event alone.
          outcomeIfUnserved: outcomeIfUnserved === outcomeIf(null) ? null : outcomeIfUnserved,
          terminal,
          durationMs: terminal ? (event.durationMs ?? null) : null,
          carrierConnectionId: carrierConnectionId ?? null,
        };
      }),
    ),
  );
  // The first row of each event (a providerCallId shared by two calls finds both; the first answers).
  const byOrd = new Map<number, AppliedRow>();
  for (const row of rows) if (!byOrd.has(Number(row.ord))) byOrd.set(Number(row.ord), row);
  return events.map((_, index): AppliedCallEvent => {
    const row = byOrd.get(index + 1);
    if (!row) return { found: false };
    const ended =
      row.status === 'ended'
        ? {
            attemptId: row.attemptId,
            callId: row.id,
            outcome: row.outcome as CallOutcome,
            durationMs: row.durationMs === null ? null : Number(row.durationMs),
            // The statement that ended the call settled its lead too (Call.settlesLeadOn): its workflow has nothing left to do.
            ...(row.leadSettled && { leadSettled: true as const }),
            ...(row.callbackAt !== null && { callbackAt: row.callbackAt }),
          }
        : null;
    // Applied and ended: this event ended the call (a state only moves forward, so this happens once).
    if (ended && row.applied) callsPlaced.inc({ outcome: ended.outcome });
    return { found: true, applied: row.applied, ended, workflowId: row.workflowId, handedOver: row.handedOver };
  });
}

/**
 * One carrier event applied to its call (applyCallEvents, a batch of one). The event endpoint batches its
 * concurrent events (lib/calls/call-event-batcher.ts); reconciliation (a lookup after the deadline) ends a call
 * through here.
 */
export async function applyCallEvent(sql: RunSql, provider: string, event: CallEvent): Promise<AppliedCallEvent> {
  const [result] = await applyCallEvents(sql, [{ provider, event }]);
  return result!;
}

/**
 * A call neither its events nor its carrier can account for (docs/features/calls.md#telephony-the-carrier-path,
 * "Deadline and reconciliation"):
 * it ends failed, and its line is released.
 */
export async function endLostCall(
  db: Database,
  attemptId: string,
): Promise<{ ended: EndedCall; handedOver: GrantedLine[] }> {
  const done = await endCall(db, attemptId, { providerCallId: null, outcome: 'failed', durationMs: null });
  return {
    ended: { attemptId, callId: done.id, outcome: done.outcome as CallOutcome, durationMs: done.durationMs },
    handedOver: done.handedOver,
  };
}

/** Who answered, as a carrier's asynchronous answering-machine detection tells it after the answer (Twilio's AsyncAmd). */
export interface AnsweredByEvent {
  eventId: string;
  providerCallId: string;
  attemptId: string;
  answeredBy: 'human' | 'machine' | null;
  occurredAt: string;
  payload: unknown;
}

/**
 * The detection's result on its call, in one statement beside applyCallEvent's: recorded once per (provider,
 * eventId) as an in-progress event, and applied while the call is still dialing and says otherwise. A result for a
 * call already ended is late: recorded, and the outcome its end gave stands. The call's state does not move (the
 * answer is its own callback); its carrier id is bound if no callback had bound it yet.
 */
export async function applyAnsweredBy(
  sql: RunSql,
  provider: string,
  event: AnsweredByEvent,
  /** As ProviderCallEvent's: only a call placed through the connection that verified the result is found. */
  carrierConnectionId: string | null = null,
): Promise<{ found: boolean; applied: boolean }> {
  const [row] = await sql<{ applied: boolean }>(
    {
      name: 'apply_answered_by',
      text: `
    WITH call AS (
      SELECT c.id, c.status = 'dialing' AND $5::text IS NOT NULL AND c."answeredBy" IS DISTINCT FROM $5 AS moves
        FROM "Call" c
       WHERE c.provider = $1 AND c."attemptId" = $3 AND (c."providerCallId" IS NULL OR c."providerCallId" = $2)
         AND ($8::uuid IS NULL OR c."carrierConnectionId" = $8::uuid)
         FOR UPDATE
    ), recorded AS (
      INSERT INTO "CallEvent" (id, provider, "eventId", "callId", status, applied, "occurredAt", payload)
      SELECT gen_random_uuid(), $1, $4, call.id, 'in-progress', call.moves, ($6::timestamptz AT TIME ZONE 'UTC'), $7::jsonb FROM call
      ON CONFLICT (provider, "eventId") DO NOTHING
      RETURNING applied
    ), moved AS (
      UPDATE "Call" c SET "answeredBy" = $5, "providerCallId" = coalesce(c."providerCallId", $2)
        FROM call, recorded WHERE c.id = call.id AND recorded.applied
      RETURNING c.id
    )
    SELECT EXISTS (SELECT 1 FROM moved) AS applied FROM call`,
    },
    provider,
    event.providerCallId,
    event.attemptId,
    event.eventId,
    event.answeredBy,
    event.occurredAt,
    JSON.stringify(event.payload),
    carrierConnectionId,
  );
  return row ? { found: true, applied: row.applied } : { found: false, applied: false };
}
