// Prisma's client type, not lib/database.ts's Database: that module builds its `sql` from this one.
import type { PrismaClient } from '../generated/prisma/client';
import type { Queryable } from './sql-pool';

/**
 * What runs one SQL statement with $n parameters and answers its rows: Prisma's $queryRawUnsafe
 * (prismaSql), or a pg pool (poolSql), cheaper per statement than Prisma's query layer where a hot path
 * has a pool of its own (the event endpoint, the simulated carrier's process). Timestamps are to be
 * selected as timestamptz: pg reads a timestamp without time zone in the process's local zone.
 */
export type RunSql = <Row>(statement: SqlStatement, ...values: unknown[]) => Promise<Row[]>;

/**
 * A statement's text, or its text with a name: on a pg pool a named statement is parsed and planned once per
 * connection and then only bound and executed (a hot path's statement); Prisma runs the text.
 */
export type SqlStatement = string | { name: string; text: string };

const textOf = (statement: SqlStatement) => (typeof statement === 'string' ? statement : statement.text);

export const prismaSql =
  (db: Pick<PrismaClient, '$queryRawUnsafe'>): RunSql =>
  <Row>(statement: SqlStatement, ...values: unknown[]) =>
    db.$queryRawUnsafe<Row[]>(textOf(statement), ...values);

export const poolSql =
  (pool: Queryable): RunSql =>
  async <Row>(statement: SqlStatement, ...values: unknown[]) =>
    (typeof statement === 'string'
      ? await pool.query(statement, values)
      : await pool.query({ name: statement.name, text: statement.text, values })
    ).rows as Row[];
