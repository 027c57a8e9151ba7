import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../lib/error-codes';
import type { Database } from '../lib/database';

/**
 * Runs `work` while holding a PostgreSQL advisory lock on the export. An attempt that Temporal gave up
 * on (a heartbeat timeout) may still be running on a stalled worker; without a fence it could append
 * to the file after its successor cut it back. The lock lives in a transaction on a connection of its
 * own, so it is released when the holder finishes or its process dies, whichever comes first.
 */
export async function withExportLock<T>(db: Database, exportId: string, work: () => Promise<T>): Promise<T> {
  // Outlives the activity's own timeout: Temporal, not Prisma, decides when an attempt has failed.
  const timeout = (activityInfo().startToCloseTimeoutMs || 10 * 60_000) + 60_000;
  return db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<Array<{ locked: boolean }>>`SELECT pg_try_advisory_xact_lock(hashtextextended(${`export:${exportId}`}, 0)) AS locked`;
    if (!row?.locked) {
      throw ApplicationFailure.create({ type: ErrorCode.export_failed, message: `export ${exportId} is still held by an earlier attempt`, nonRetryable: false });
    }
    return work();
  }, { maxWait: 10_000, timeout });
}
