import { endCall, HAND_OVER_LINES_CTES, NOW_UTC, type GrantedLine } from './call-lines';
import type { CallOutcome } from './call-outcomes';
import type { Database } from '../database';
import type { RunSql } from '../run-sql';
import type { CallEvent } from './call-event';
import { CARRIER_CALL_STATES, callStateRank, isTerminalCallState, type CarrierCallState } from './call-states';
import type { EndedCall } from './ended-call';
import { callsPlaced } from '../metrics/calls';

/**
 * How a terminal carrier state becomes the call's outcome (docs/features/calls.md#telephony-the-carrier-path,
 * "Outcomes"): completed by a human -> answered, by a machine -> voicemail (unknown: answered); busy -> busy; no-answer
 * -> no_answer; failed -> invalid_number when the carrier's reason says so, else failed; canceled (we hung up: the
 * campaign was stopped) -> what the call had reached: answered or voicemail once picked up, no_answer while it was
 * still ringing.
 */
export function outcomeOfTerminalState(
  status: CarrierCallState,
  answeredBy: 'human' | 'machine' | null,
  reason: string | null,
): CallOutcome {
  switch (status) {
    case 'completed':
      return answeredBy === 'machine' ? 'voicemail' : 'answered';
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
  id: string;
  attemptId: string;
  workflowId: string | null;
  applied: boolean;
  status: string;
  outcome: string | null;
  durationMs: number | null;
  handedOver: GrantedLine[];
}

/** The rank of "carrierStatus" in SQL, from the one table of ranks (lib/calls/call-states.ts). */
const RANK_SQL = `CASE c."carrierStatus" ${CARRIER_CALL_STATES.map((state) => `WHEN '${state}' THEN ${callStateRank(state)}`).join(' ')} ELSE 0 END`;

/**
 * One SQL statement: the call locked, the event recorded once per (provider, eventId), the call moved
 * when the event ranks above its state (and it is still dialing), a terminal state ending it and
 * releasing its campaign's line. $10-$12: the outcome for each answeredBy the call may end with, worked
 * out by outcomeOfTerminalState, so that the rule lives in one place.
 */
const APPLY_EVENT_SQL = (byAttempt: boolean) => `
  WITH call AS (
    SELECT c.id, c."attemptId", c."workflowId", c."campaignId", c.status, c.outcome, c."durationMs",
           c.status = 'dialing' AND ${RANK_SQL} < $4 AS moves
      FROM "Call" c
     WHERE c.provider = $1 AND ${byAttempt ? `c."attemptId" = $3 AND (c."providerCallId" IS NULL OR c."providerCallId" = $2)` : `$3::text IS NULL AND c."providerCallId" = $2`}
       FOR UPDATE
  ), recorded AS (
    INSERT INTO "CallEvent" (id, provider, "eventId", "callId", status, applied, "occurredAt", payload)
    SELECT gen_random_uuid(), $1, $5, call.id, $6, call.moves, ($7::timestamptz AT TIME ZONE 'UTC'), $8::jsonb FROM call
    ON CONFLICT (provider, "eventId") DO NOTHING
    RETURNING applied
  ), moved AS (
    UPDATE "Call" c
       SET "carrierStatus" = $6, "answeredBy" = coalesce($9, c."answeredBy"), "providerCallId" = $2,
           "lastEventAt" = ($7::timestamptz AT TIME ZONE 'UTC'),
           status = CASE WHEN $13 THEN 'ended' ELSE c.status END,
           outcome = CASE WHEN $13 THEN (CASE coalesce($9, c."answeredBy") WHEN 'human' THEN $10 WHEN 'machine' THEN $11 ELSE $12 END) ELSE c.outcome END,
           "durationMs" = CASE WHEN $13 THEN $14::int ELSE c."durationMs" END,
           "endedAt" = CASE WHEN $13 THEN ${NOW_UTC} ELSE c."endedAt" END
      FROM call, recorded
     WHERE c.id = call.id AND recorded.applied
    RETURNING c.status, c.outcome, c."durationMs", c."campaignId"
  ), freeing AS (
    SELECT moved."campaignId" AS campaign_id, 1 AS freed FROM moved WHERE moved.status = 'ended' AND moved."campaignId" IS NOT NULL
  ), ${HAND_OVER_LINES_CTES}
  SELECT call.id::text, call."attemptId", call."workflowId", moved.status IS NOT NULL AS applied,
         coalesce(moved.status, call.status) AS status, coalesce(moved.outcome, call.outcome) AS outcome,
         coalesce(moved."durationMs", call."durationMs") AS "durationMs",
         coalesce((SELECT json_agg(granted_lines) FROM granted_lines), '[]'::json) AS "handedOver"
    FROM call LEFT JOIN moved ON true`;

/**
 * Named: on the event endpoint's pg pool each connection parses and plans the statement once, then only binds
 * and executes it (bench/intake.ts (b), docs/benchmarks.md#intake-npm-run-benchintake: the parse and plan of
 * this CTE had been redone at every event; named, the event's extra p50 over the bare route fell from about 4 to 8 ms to
 * about 1.5 to 3.3 ms, and the ratio to the bare route rose from 0.22 to 0.41 to 0.41 to 0.56 on a shared machine).
 */
const APPLY_EVENT_BY_ATTEMPT = { name: 'apply_call_event_by_attempt', text: APPLY_EVENT_SQL(true) };
const APPLY_EVENT_BY_CALL_ID = { name: 'apply_call_event_by_call_id', text: APPLY_EVENT_SQL(false) };

/**
 * One carrier event applied to its call, in one statement (APPLY_EVENT_SQL): recorded once per
 * (provider, eventId) (a second delivery changes nothing), the call's state moved only forward
 * (lib/calls/call-states.ts), and a terminal state ends the call and releases its line, once. The
 * event endpoint (on a pg pool) and reconciliation (a lookup after the deadline, on Prisma) both end
 * calls through here.
 */
export async function applyCallEvent(sql: RunSql, provider: string, event: CallEvent): Promise<AppliedCallEvent> {
  const terminal = isTerminalCallState(event.status);
  const reason = event.reason ?? null;
  const outcomeIf = (answeredBy: 'human' | 'machine' | null) =>
    outcomeOfTerminalState(event.status, event.answeredBy ?? answeredBy, reason);
  const [row] = await sql<AppliedRow>(
    event.attemptId !== undefined ? APPLY_EVENT_BY_ATTEMPT : APPLY_EVENT_BY_CALL_ID,
    provider,
    event.providerCallId,
    event.attemptId ?? null,
    callStateRank(event.status),
    event.eventId,
    event.status,
    event.occurredAt,
    JSON.stringify(event),
    event.answeredBy ?? null,
    outcomeIf('human'),
    outcomeIf('machine'),
    outcomeIf(null),
    terminal,
    terminal ? (event.durationMs ?? null) : null,
  );
  if (!row) return { found: false };
  const ended =
    row.status === 'ended'
      ? {
          attemptId: row.attemptId,
          callId: row.id,
          outcome: row.outcome as CallOutcome,
          durationMs: row.durationMs === null ? null : Number(row.durationMs),
        }
      : null;
  // Applied and ended: this event ended the call (a state only moves forward, so this happens once).
  if (ended && row.applied) callsPlaced.inc({ outcome: ended.outcome });
  return { found: true, applied: row.applied, ended, workflowId: row.workflowId, handedOver: row.handedOver };
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
): Promise<{ found: boolean; applied: boolean }> {
  const [row] = await sql<{ applied: boolean }>(
    {
      name: 'apply_answered_by',
      text: `
    WITH call AS (
      SELECT c.id, c.status = 'dialing' AND $5::text IS NOT NULL AND c."answeredBy" IS DISTINCT FROM $5 AS moves
        FROM "Call" c
       WHERE c.provider = $1 AND c."attemptId" = $3 AND (c."providerCallId" IS NULL OR c."providerCallId" = $2)
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
  );
  return row ? { found: true, applied: row.applied } : { found: false, applied: false };
}
