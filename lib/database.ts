import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';
import { poolSql, type RunSql } from './run-sql';
import { createSqlPool, type DatabaseTimeouts } from './sql-pool';

export type Database = PrismaClient & {
  /**
   * The client's own pg pool, without Prisma's query layer: for a hot path's statements, which Prisma's client
   * would cost more CPU each than PostgreSQL spends on them (docs/benchmarks/bare-ladder.md).
   */
  readonly sql: RunSql;
};

export function createDatabase(
  databaseUrl: string,
  options: {
    poolSize?: number;
    /**
     * How long a transaction may wait for a connection of the pool before it fails; default Prisma's 2 s. The twins
     * wait longer: a twin that fails a create under a burst of calls answers 500 where the carrier it imitates would not.
     */
    transactionMaxWaitMs?: number;
    /** PostgreSQL's statement and idle-in-transaction deadlines; default DEFAULT_DATABASE_TIMEOUTS (lib/sql-pool.ts). */
    timeouts?: DatabaseTimeouts;
  } = {},
): Database {
  // Fail fast when PostgreSQL is unreachable so requests answer 503 instead of hanging (createSqlPool's timeout).
  const pool = createSqlPool(databaseUrl, options.poolSize ?? 10, options.timeouts);
  // One pool for both: Prisma's statements and the raw ones share its connections, and $disconnect ends it.
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  const transactionOptions = options.transactionMaxWaitMs ? { maxWait: options.transactionMaxWaitMs } : undefined;
  return Object.assign(new PrismaClient({ adapter, transactionOptions }), { sql: poolSql(pool) });
}
