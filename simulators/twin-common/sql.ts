import pg from 'pg';

/**
 * How a twin runs its SQL: one statement with $n parameters, answering its rows. A statement given a name is parsed
 * and planned once per connection (a hot path's). A pg pool's query (twinPool, the twin's process), or any function of
 * that shape a test hands it; the twin needs nothing else of a database client. Timestamps are stored as
 * timestamptz, so that pg reads them in no process's local zone.
 */
export type TwinSql = <Row>(statement: string | { name: string; text: string }, ...values: unknown[]) => Promise<Row[]>;

/**
 * A twin process's own pool on its database, and its TwinSql. A connection that does not come within
 * connectionTimeoutMs fails the request (a 500 the caller retries) rather than holding it; a statement or a
 * transaction left open past a minute is ended by PostgreSQL. A connection that loses its server fails the query it
 * runs, which its caller handles; unheard, that error (or an idle connection's) would also end the process.
 */
export function twinPool(
  databaseUrl: string,
  options: { size: number; connectionTimeoutMs: number; onIdleError: (error: Error) => void },
) {
  const { onIdleError } = options;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.size,
    connectionTimeoutMillis: options.connectionTimeoutMs,
    statement_timeout: 60_000,
    idle_in_transaction_session_timeout: 60_000,
  });
  pool.on('error', onIdleError);
  pool.on('connect', (client) => client.on('error', () => {}));
  const sql: TwinSql = async <Row>(statement: string | { name: string; text: string }, ...values: unknown[]) =>
    (await pool.query(typeof statement === 'string' ? { text: statement, values } : { ...statement, values }))
      .rows as Row[];
  return { pool, sql };
}

/** PostgreSQL's unique_violation: a concurrent write holds the value. */
export const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';

/**
 * A twin's tables made once in a schema of its own: one simple-protocol batch (no parameters) whose advisory lock makes
 * two twins starting on one database at once create them once, since CREATE ... IF NOT EXISTS alone races on
 * PostgreSQL's catalog. `lock` names the lock (the schema, or a table created apart from the schema's others).
 */
export function twinSchemaBatch(schema: string, ddl: string, lock = schema): string {
  return `BEGIN;
SELECT pg_advisory_xact_lock(hashtext('${lock}'));
CREATE SCHEMA IF NOT EXISTS ${schema};
${ddl.trim()}
COMMIT;`;
}
