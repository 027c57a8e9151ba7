import pg from 'pg';

/**
 * A plain pg pool where Prisma's query layer would cost too much: the door of every request (one SQL
 * function call per request, where Prisma would double the cost, measured in bench/), and the export
 * worker, which must stay small and loads no Prisma at all. Everything else goes through Prisma.
 */
export function createSqlPool(databaseUrl: string, size = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: size, connectionTimeoutMillis: 3_000 });
  // An idle client that loses its server is replaced on the next checkout; the error needs no handler.
  pool.on('error', () => {});
  // A checked-out client that loses its server (a restart, a terminated backend) fails the query it
  // runs, which its caller handles; without a listener the same error would also crash the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export type SqlPool = pg.Pool;

/** What runs one statement with $n parameters: a pool, or one client of it (inside a transaction). */
export interface Queryable {
  query<Row extends pg.QueryResultRow>(text: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<Row>>;
}
