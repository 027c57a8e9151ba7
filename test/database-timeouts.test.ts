import { describe, expect, it } from 'vitest';
import { withActivityLock } from '../lib/exports/export-lock';
import { parseConfig, databaseTimeoutsOf } from '../lib/config';
import { createDatabase } from '../lib/database';
import { ErrorCode } from '../lib/error-codes';
import { createSqlPool, DEFAULT_DATABASE_TIMEOUTS } from '../lib/sql-pool';
import { advisoryLockIsFree, useTestDatabase } from './support/database';
import { until } from './support/until';

/*
 * PostgreSQL's own deadlines on every pool (lib/sql-pool.ts, docs/configuration.md#database-timeouts): a statement over
 * statement_timeout is cancelled, a session idle in a transaction is ended and its locks released; the advisory lock
 * of an export or a sheet, which idles on purpose, is not.
 */

const { url } = await useTestDatabase();
const SHORT = { statementTimeoutMs: 200, idleInTransactionTimeoutMs: 300 };

describe('database timeouts', () => {
  it('are configured in one block, 60 s each by default, 0 to turn one off', () => {
    expect(databaseTimeoutsOf(parseConfig({ DATABASE_URL: url }))).toEqual(DEFAULT_DATABASE_TIMEOUTS);
    expect(DEFAULT_DATABASE_TIMEOUTS).toEqual({ statementTimeoutMs: 60_000, idleInTransactionTimeoutMs: 60_000 });
    expect(
      databaseTimeoutsOf(
        parseConfig({
          DATABASE_URL: url,
          DATABASE_STATEMENT_TIMEOUT_MS: '0',
          DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1500',
        }),
      ),
    ).toEqual({ statementTimeoutMs: 0, idleInTransactionTimeoutMs: 1500 });
    expect(() => parseConfig({ DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: '-1' })).toThrow(
      /DATABASE_STATEMENT_TIMEOUT_MS/,
    );
  });

  it('cancel a statement over statement_timeout, on the plain pool and through Prisma', async () => {
    const pool = createSqlPool(url, 2, SHORT);
    const db = createDatabase(url, { poolSize: 2, timeouts: SHORT });
    try {
      expect((await pool.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]).toEqual({
        statement_timeout: '200ms',
      });
      await expect(pool.query('SELECT pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
      await expect(db.$queryRawUnsafe('SELECT pg_sleep(30)')).rejects.toThrow(/statement timeout/);
      await expect(db.sql('SELECT pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
      // The pool goes on serving.
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
      await db.$disconnect();
    }
  });

  it('end a session idle inside a transaction, releasing its locks', async () => {
    const pool = createSqlPool(url, 2, SHORT);
    try {
      const client = await pool.connect();
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('idle-holder', 0))");
      expect(await advisoryLockIsFree(pool, 'idle-holder')).toBe(false);
      // The holder does nothing more: the server ends its session and its lock with it.
      await until(
        () => advisoryLockIsFree(pool, 'idle-holder'),
        (free) => free,
        10_000,
      );
      await expect(client.query('SELECT 1')).rejects.toThrow();
      client.release(true);
    } finally {
      await pool.end();
    }
  });

  it("leave alone the export's and the sheet's advisory lock, which idles while its work runs", async () => {
    const pool = createSqlPool(url, 3, SHORT);
    try {
      let heldThroughout = true;
      const result = await withActivityLock(pool, 'sheet:idle-on-purpose', ErrorCode.sheet_sync_failed, async () => {
        // Three times the idle deadline, in short statements on other connections.
        for (let step = 0; step < 9; step++) {
          await pool.query('SELECT pg_sleep(0.1)');
          heldThroughout &&= !(await advisoryLockIsFree(pool, 'sheet:idle-on-purpose'));
        }
        return 'done';
      });
      expect(result).toBe('done');
      expect(heldThroughout).toBe(true);
      expect(await advisoryLockIsFree(pool, 'sheet:idle-on-purpose')).toBe(true);
    } finally {
      await pool.end();
    }
  });
});
