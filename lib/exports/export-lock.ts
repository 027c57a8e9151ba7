import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../error-codes';
import type { SqlPool } from '../sql-pool';

/**
 * Runs `work` while holding a PostgreSQL advisory lock on the export. An attempt that Temporal gave up
 * on (a heartbeat timeout) may still be running on a stalled worker; without a fence it could append
 * to the file after its successor cut it back. The lock lives in a transaction on a connection of its
 * own, so it is released when the holder finishes or its process dies, whichever comes first. The
 * transaction has no deadline of its own: Temporal decides when an attempt has failed, and a stalled
 * attempt learns it at its next heartbeat, which cancels it.
 */
export function withExportLock<T>(sql: SqlPool, exportId: string, work: () => Promise<T>): Promise<T> {
  return withActivityLock(sql, `export:${exportId}`, ErrorCode.export_failed, work);
}

/**
 * The same fence for any resource an activity writes (an export's file, a live sheet's cells): `name`
 * is the lock's name, `failureType` the retryable failure's type when an earlier attempt still holds it.
 */
export async function withActivityLock<T>(
  sql: SqlPool,
  name: string,
  failureType: ErrorCode,
  work: () => Promise<T>,
): Promise<T> {
  // The connection sits idle while `work` runs on others; should PostgreSQL drop it meanwhile, the
  // COMMIT reports it (createSqlPool's clients never crash the process with an 'error' event).
  const client = await sql.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    // This transaction idles while `work` runs, for as long as an export takes: the pool's idle-in-transaction
    // deadline (lib/sql-pool.ts) would end it under a healthy attempt. A stuck attempt is ended by Temporal instead (its
    // heartbeat timeout cancels it; the Google client's timeout and the cancellation signal end a hung request), and
    // the ROLLBACK below releases the lock.
    await client.query('SET LOCAL idle_in_transaction_session_timeout = 0');
    const {
      rows: [row],
    } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked', [
      name,
    ]);
    if (!row?.locked) {
      throw ApplicationFailure.create({
        type: failureType,
        message: `${name} is still held by an earlier attempt`,
        nonRetryable: false,
      });
    }
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is not given back to the pool.
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
