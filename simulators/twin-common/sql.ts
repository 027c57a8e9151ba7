/**
 * How a twin runs its SQL: one statement with $n parameters, answering its rows. A pg pool's query (the twin's
 * process, main.ts), or any function of that shape a test hands it; the twin needs nothing else of a database client.
 * Timestamps are stored as timestamptz, so that pg reads them in no process's local zone.
 */
export type TwinSql = <Row>(text: string, ...values: unknown[]) => Promise<Row[]>;

/** PostgreSQL's unique_violation: a concurrent write holds the value. */
export const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
