import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { createDatabase, type Database } from '../../lib/database';
import { runStatement } from '../../lib/pg-statement';
import type { Queryable } from '../../lib/sql-pool';

/** How long a test file's end waits for its database to be dropped. */
const DROP_WAIT_MS = 60_000;

export interface TestDatabase {
  url: string;
  db: Database;
}

/**
 * A database of its own for one test file, cloned from the migrated template (milliseconds), dropped
 * when the file is done.
 */
export async function useTestDatabase(): Promise<TestDatabase> {
  const stack = inject('stack');
  const name = `test_${randomBytes(6).toString('hex')}`;
  await runStatement(stack.postgresAdminUrl, `CREATE DATABASE "${name}" TEMPLATE "${stack.templateDatabase}"`);
  const url = new URL(stack.postgresAdminUrl);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString());
  afterAll(async () => {
    // Cleanup, not a check: on a loaded machine the drop (which asks PostgreSQL for a checkpoint) once outlasted the
    // hook's 120 s and failed a file whose tests had all passed. It is given DROP_WAIT_MS, then left to finish on its
    // own; the run's stack is torn down at its end in any case.
    const dropped = (async () => {
      await db.$disconnect();
      await runStatement(stack.postgresAdminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    })();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DROP_WAIT_MS);
      timer.unref();
    });
    await Promise.race([dropped.catch((error: unknown) => console.warn(`dropping ${name} failed`, error)), waited]);
    clearTimeout(timer);
  });
  return { url: url.toString(), db };
}

/** Whether another session could take the advisory lock `name` (as withActivityLock names them) now; gives it back. */
export async function advisoryLockIsFree(pool: Queryable, name: string): Promise<boolean> {
  const {
    rows: [row],
  } = await pool.query<{ free: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS free', [name]);
  if (row!.free) await pool.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [name]);
  return row!.free;
}
