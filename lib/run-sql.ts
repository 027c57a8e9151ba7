import type { Database } from './database';
import type { Queryable } from './sql-pool';

/**
 * What runs one SQL statement with $n parameters and answers its rows: Prisma's $queryRawUnsafe
 * (prismaSql), or a pg pool (poolSql), cheaper per statement than Prisma's query layer where a hot path
 * has a pool of its own (the event endpoint, the simulated carrier's process). Timestamps are to be
 * selected as timestamptz: pg reads a timestamp without time zone in the process's local zone.
 */
export type RunSql = <Row>(text: string, ...values: unknown[]) => Promise<Row[]>;

export const prismaSql =
  (db: Pick<Database, '$queryRawUnsafe'>): RunSql =>
  <Row>(text: string, ...values: unknown[]) =>
    db.$queryRawUnsafe<Row[]>(text, ...values);

export const poolSql =
  (pool: Queryable): RunSql =>
  async <Row>(text: string, ...values: unknown[]) =>
    (await pool.query(text, values)).rows as Row[];
