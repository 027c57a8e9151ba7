import type { OpenedCarrierConnection } from '../carrier-connections/connections';
import type { RunSql } from '../run-sql';
import { carrierRecordingsOf } from './carrier-recordings';
import { expiredRecordings, markRecordingDeleted } from './recording-store';

/** The most recordings one pass deletes: a pass is a batch of carrier requests, the next pass takes the rest. */
export const RETENTION_BATCH = 100;

export interface RetentionPass {
  deleted: number;
  /** Deleted here only: the call's carrier connection was removed, its credentials with it. */
  deletedHereOnly: number;
  /** The carrier refused or did not answer: tried again at the next pass. */
  failed: number;
  /** The last failure's message (a carrier's answer, never its request or credentials). */
  lastError?: string;
}

/**
 * Deletes the recordings past their workspace's retention at `now` (docs/features/recordings.md#retention): at the
 * carrier first (with the call's connection), then marked deleted, so that a failure at the carrier leaves the
 * recording to the next pass. A recording whose connection was removed is marked deleted here only (the carrier can
 * no longer be asked; deletedAtCarrier false says so). Idempotent: several workers sweeping at once delete a
 * recording at most twice at the carrier, which answers the second 404 (deleted too).
 */
export async function deleteExpiredRecordings(
  sql: RunSql,
  openConnection: (connectionId: string) => Promise<OpenedCarrierConnection | null>,
  { now = new Date(), limit = RETENTION_BATCH }: { now?: Date; limit?: number } = {},
): Promise<RetentionPass> {
  const pass: RetentionPass = { deleted: 0, deletedHereOnly: 0, failed: 0 };
  for (const recording of await expiredRecordings(sql, now, limit)) {
    try {
      const connection = await openConnection(recording.carrierConnectionId);
      if (connection && recording.carrierRecordingId)
        await carrierRecordingsOf(connection).remove(recording.carrierRecordingId);
      await markRecordingDeleted(sql, recording.callId, connection !== null);
      if (connection) pass.deleted += 1;
      else pass.deletedHereOnly += 1;
    } catch (error) {
      // Left completed: the next pass tries again.
      pass.failed += 1;
      pass.lastError = error instanceof Error ? error.message : String(error);
    }
  }
  return pass;
}
