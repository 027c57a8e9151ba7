import type { RunSql } from '../run-sql';

/**
 * The recordings' SQL (docs/features/recordings.md): a call's recording reference, claimed once when its call is
 * answered, moved by the carrier's callback, read by GET /calls/{id}/recording and deleted by the retention sweep.
 * Timestamps are selected as timestamptz (lib/run-sql.ts).
 */

export type RecordingStatus = 'starting' | 'in-progress' | 'completed' | 'absent' | 'failed' | 'deleted';

export interface CallRecordingRow {
  callId: string;
  workspaceId: string;
  carrierConnectionId: string;
  carrierRecordingId: string | null;
  status: RecordingStatus;
  durationSec: number | null;
  channels: number | null;
  completedAt: Date | null;
  deletedAt: Date | null;
}

const columnsOf = (
  r: string,
) => `${r}."callId"::text, ${r}."workspaceId"::text, ${r}."carrierConnectionId"::text, ${r}."carrierRecordingId",
  ${r}.status, ${r}."durationSec", ${r}.channels, ${r}."completedAt" AT TIME ZONE 'UTC' AS "completedAt",
  ${r}."deletedAt" AT TIME ZONE 'UTC' AS "deletedAt"`;

/**
 * Claims the start of the call's recording when its workspace records calls: true for the one request that is to
 * start it (a TwiML request Twilio sends again, or a webhook delivered twice, finds it claimed: false). A workspace
 * that does not record, or a call without a carrier connection: false, nothing written.
 */
export async function claimRecordingStart(sql: RunSql, callId: string): Promise<boolean> {
  const rows = await sql<{ claimed: number }>(
    {
      name: 'recording_claim_start',
      text: `INSERT INTO "CallRecording" ("callId", "workspaceId", "carrierConnectionId", status)
             SELECT c.id, c."workspaceId", c."carrierConnectionId", 'starting'
               FROM "Call" c JOIN "ComplianceSettings" cs ON cs."workspaceId" = c."workspaceId"
              WHERE c.id = $1::uuid AND cs."recordingEnabled" AND c."carrierConnectionId" IS NOT NULL
             ON CONFLICT ("callId") DO NOTHING
             RETURNING 1 AS claimed`,
    },
    callId,
  );
  return rows.length > 0;
}

/**
 * The carrier accepted the start: the recording's id is known (a callback that came first has already set it), or null
 * when the carrier gives none at the start (Telnyx: found when the recording is saved).
 */
export async function markRecordingStarted(
  sql: RunSql,
  callId: string,
  carrierRecordingId: string | null,
): Promise<void> {
  await sql(
    {
      name: 'recording_mark_started',
      text: `UPDATE "CallRecording" SET "carrierRecordingId" = coalesce("carrierRecordingId", $2::text),
                    status = CASE WHEN status = 'starting' THEN 'in-progress' ELSE status END
              WHERE "callId" = $1::uuid`,
    },
    callId,
    carrierRecordingId,
  );
}

/** The carrier refused the start: the call has no recording (failed), said by GET /calls/{id}/recording. */
export async function markRecordingFailed(sql: RunSql, callId: string): Promise<void> {
  await sql(
    {
      name: 'recording_mark_failed',
      text: `UPDATE "CallRecording" SET status = 'failed' WHERE "callId" = $1::uuid AND status = 'starting'`,
    },
    callId,
  );
}

/**
 * The carrier's word on a recording of a call placed through `connectionId`: completed (with its duration and
 * channels), absent (nothing was recorded) or failed. The call is the one the callback's URL names, of that very connection: a callback signed by
 * one account about another connection's call changes nothing (answers false). Once: a recording already completed,
 * absent or deleted is left as it is. One marked failed by the product (its start's answer was lost or refused) is
 * taken: the carrier made it after all, and the retention must find it to delete it.
 */
export async function applyRecordingStatus(
  sql: RunSql,
  update: {
    connectionId: string;
    attemptId: string;
    carrierRecordingId: string;
    status: 'completed' | 'absent' | 'failed';
    durationSec: number | null;
    channels: number | null;
    /** false: only whether the call's recording is known is answered (a callback that moves nothing: in-progress). */
    apply: boolean;
  },
): Promise<{ found: boolean; applied: boolean }> {
  const [row] = await sql<{ found: boolean; applied: boolean }>(
    {
      name: 'recording_apply_status',
      text: `WITH call AS (SELECT id FROM "Call" WHERE "attemptId" = $1 AND "carrierConnectionId" = $2::uuid),
                  applied AS (
             UPDATE "CallRecording" r SET "carrierRecordingId" = $3, status = $4::text, "durationSec" = $5::int, channels = $6::int,
                    "completedAt" = CASE WHEN $4::text = 'completed' THEN now() AT TIME ZONE 'UTC' END
               FROM call WHERE $7::boolean AND r."callId" = call.id AND r.status IN ('starting', 'in-progress', 'failed')
                AND (r."carrierRecordingId" IS NULL OR r."carrierRecordingId" = $3)
             RETURNING 1)
             SELECT EXISTS (SELECT 1 FROM call JOIN "CallRecording" r ON r."callId" = call.id) AS found,
                    EXISTS (SELECT 1 FROM applied) AS applied`,
    },
    update.attemptId,
    update.connectionId,
    update.carrierRecordingId,
    update.status,
    update.durationSec,
    update.channels,
    update.apply,
  );
  return row ?? { found: false, applied: false };
}

/** The recording of a call of the workspace; undefined: none (never recorded, or another workspace's call). */
export async function recordingOfCall(
  sql: RunSql,
  workspaceId: string,
  callId: string,
): Promise<CallRecordingRow | undefined> {
  const [row] = await sql<CallRecordingRow>(
    {
      name: 'recording_of_call',
      text: `SELECT ${columnsOf('r')} FROM "CallRecording" r WHERE r."callId" = $1::uuid AND r."workspaceId" = $2::uuid`,
    },
    callId,
    workspaceId,
  );
  return row;
}

/**
 * Completed recordings older than their workspace's retention at `now` (docs/features/recordings.md#retention),
 * oldest first, at most `limit`: the sweep's next batch. Answered from the (status, completedAt) index.
 */
export async function expiredRecordings(sql: RunSql, now: Date, limit: number): Promise<CallRecordingRow[]> {
  return sql<CallRecordingRow>(
    {
      name: 'recording_expired',
      text: `SELECT ${columnsOf('r')}
               FROM "CallRecording" r JOIN "ComplianceSettings" cs ON cs."workspaceId" = r."workspaceId"
              WHERE r.status = 'completed' AND cs."recordingRetentionDays" IS NOT NULL
                AND r."completedAt" < ($1::timestamptz AT TIME ZONE 'UTC') - make_interval(days => cs."recordingRetentionDays")
              ORDER BY r."completedAt" LIMIT $2`,
    },
    now,
    limit,
  );
}

/** The recording is deleted (at the carrier too, unless `atCarrier` is false): its reference stays, marked. */
export async function markRecordingDeleted(sql: RunSql, callId: string, atCarrier: boolean): Promise<void> {
  await sql(
    {
      name: 'recording_mark_deleted',
      text: `UPDATE "CallRecording" SET status = 'deleted', "deletedAt" = now() AT TIME ZONE 'UTC', "deletedAtCarrier" = $2
              WHERE "callId" = $1::uuid AND status <> 'deleted'`,
    },
    callId,
    atCarrier,
  );
}
