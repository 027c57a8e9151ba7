import { openCarrierConnection } from '../lib/carrier-connections/connections';
import type { Database } from '../lib/database';
import { deleteExpiredRecordings } from '../lib/recordings/recording-retention';
import { prismaSql } from '../lib/run-sql';
import type { Keyring } from '../lib/secrets/keyring';
import { startPeriodicSweep } from './periodic-sweep';

/** How often each worker deletes the recordings past their retention: retention is counted in days. */
export const RECORDING_RETENTION_SWEEP_EVERY_MS = 15 * 60_000;

/**
 * The periodic caller of deleteExpiredRecordings (docs/features/recordings.md#retention): at start and every
 * RECORDING_RETENTION_SWEEP_EVERY_MS, each worker deletes a batch of the recordings past their workspace's retention,
 * at the carrier with the call's connection, then marks them deleted. Several workers at once are safe (a deletion
 * the carrier has already done answers 404, deleted too). Answers its stop.
 */
export function startRecordingRetentionSweep(
  db: Database,
  keyring: Keyring,
  { everyMs = RECORDING_RETENTION_SWEEP_EVERY_MS }: { everyMs?: number } = {},
): () => void {
  return startPeriodicSweep('recording-retention-sweep', everyMs, async () => {
    const pass = await deleteExpiredRecordings(prismaSql(db), (id) => openCarrierConnection(db, keyring, id));
    if (pass.failed > 0) throw new Error(`${pass.failed} recordings not deleted at their carrier: ${pass.lastError}`);
    return pass.deleted + pass.deletedHereOnly > 0
      ? `recordings past their retention deleted: ${pass.deleted} at their carrier, ${pass.deletedHereOnly} here only (connection removed)`
      : null;
  });
}
