import pg from 'pg';

/**
 * A plain pg pool where Prisma's query layer would cost too much: the door of every request (one SQL
 * function call per request, where Prisma would double the cost, measured in bench/), and the export
 * worker, which must stay small and loads no Prisma at all. Everything else goes through Prisma.
 */
/**
 * PostgreSQL's own deadlines on every connection of a pool (docs/configuration.md#database-timeouts), sent in the
 * connection's startup packet: a statement running longer than statementTimeoutMs is cancelled (57014), and a session
 * left idle inside a transaction longer than idleInTransactionTimeoutMs is ended, its locks released. 0 turns one off.
 */
export interface DatabaseTimeouts {
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * The defaults (DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS). The longest legitimate
 * statements are bulk ones: a stop cancelling a campaign's leads (100,000 in about 2 s on the benchmark machine), a
 * contact enrollment, the retention sweeps; exports and sheets read pages of at most a few thousand rows. 60 s leaves
 * them a wide margin and still ends a runaway statement. A transaction's statements follow each other in
 * milliseconds; one that idles for 60 s holds its locks for a caller that is gone or stuck. The advisory locks of
 * exports and sheets idle on purpose and turn the latter off for their own transaction (lib/exports/export-lock.ts).
 */
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  statementTimeoutMs: 60_000,
  idleInTransactionTimeoutMs: 60_000,
};

export function createSqlPool(
  databaseUrl: string,
  size = 10,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: size,
    connectionTimeoutMillis: 3_000,
    statement_timeout: timeouts.statementTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
  });
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
