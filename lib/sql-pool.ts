import pg from 'pg';

/**
 * A plain pg pool for the door of every request: one SQL function call per request, where Prisma's
 * query layer would double the cost (measured in bench/). Everything else goes through Prisma.
 */
export function createSqlPool(databaseUrl: string, size = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: size, connectionTimeoutMillis: 3_000 });
  // An idle client that loses its server is replaced on the next checkout; the error needs no handler.
  pool.on('error', () => {});
  return pool;
}

export type SqlPool = pg.Pool;
