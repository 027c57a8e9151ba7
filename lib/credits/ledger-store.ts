import type pg from 'pg';
import type { Database } from '../database';
import { poolSql, prismaSql, type RunSql } from '../run-sql';

/**
 * Where the credit functions run their statements: Prisma (the API, the workers) or a pg pool (a hot
 * path with a pool of its own; the bench). Inside `transaction`, `sql` runs on one connection, and a
 * thrown error rolls everything back.
 */
export interface CreditStore {
  /** One statement at a time, each committed on its own (a debit: one statement, see applyEntry). */
  sql: RunSql;
  transaction<T>(work: (sql: RunSql) => Promise<T>): Promise<T>;
}

/** Transactions wait for a connection and run for longer than Prisma's defaults (2 s, 5 s) under a burst of debits. */
const PRISMA_TRANSACTION = { maxWait: 15_000, timeout: 15_000 };

export const prismaCreditStore = (db: Database): CreditStore => ({
  sql: prismaSql(db),
  transaction: (work) => db.$transaction((tx) => work(prismaSql(tx)), PRISMA_TRANSACTION),
});

export const poolCreditStore = (pool: pg.Pool): CreditStore => ({
  sql: poolSql(pool),
  async transaction(work) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(poolSql(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  },
});

export const CREDIT_KINDS = [
  'grant',
  'refund',
  'test_call',
  'recording_analysis',
  'whatsapp_message',
  'hold',
  'hold_release',
] as const;
export type CreditKind = (typeof CREDIT_KINDS)[number];
/** What an operation is charged as: a hold reserves for one of these. */
export type ChargeKind = 'test_call' | 'recording_analysis' | 'whatsapp_message';
export type CreditEntryStatus = 'pending' | 'posted' | 'voided';
export type CreditActorType = 'api_key' | 'operator' | 'system';

/** Who caused an entry: an API key (id: the key id), an operator (the admin CLI), the service (id: what part). */
export interface CreditActor {
  type: CreditActorType;
  id?: string | null;
}

/** What an entry is for: referenceType names the table (call, speech_analysis, whatsapp_message...), referenceId the row. */
export interface CreditReference {
  type: string;
  id: string;
}

/** One ledger entry as the credit functions and the API answer it; amounts are decimal strings. */
export interface LedgerEntry {
  id: string;
  workspaceId: string;
  kind: CreditKind;
  amount: string;
  balanceAfter: string;
  status: CreditEntryStatus;
  heldFor: ChargeKind | null;
  holdId: string | null;
  referenceType: string | null;
  referenceId: string | null;
  actor: CreditActorType;
  actorId: string | null;
  idempotencyKey: string;
  createdAt: Date;
  settledAt: Date | null;
}

/** The columns of a LedgerEntry (of `source`: a table alias or a composite value), amounts as text; timestamps as timestamptz (pg reads timestamps in the local zone). */
export const ledgerColumns = (source = '"CreditLedgerEntry"') => `${source}.id::text AS id,
  ${source}."workspaceId"::text AS "workspaceId", ${source}.kind::text AS kind, ${source}.amount::text AS amount,
  ${source}."balanceAfter"::text AS "balanceAfter", ${source}.status::text AS status,
  ${source}."heldFor"::text AS "heldFor", ${source}."holdId"::text AS "holdId",
  ${source}."referenceType" AS "referenceType", ${source}."referenceId" AS "referenceId",
  ${source}.actor::text AS actor, ${source}."actorId" AS "actorId", ${source}."idempotencyKey" AS "idempotencyKey",
  ${source}."createdAt" AT TIME ZONE 'UTC' AS "createdAt", ${source}."settledAt" AT TIME ZONE 'UTC' AS "settledAt"`;

export const LEDGER_COLUMNS = ledgerColumns();

/** A row selected with LEDGER_COLUMNS. */
export type LedgerRow = Omit<LedgerEntry, 'createdAt' | 'settledAt'> & {
  createdAt: Date | string;
  settledAt: Date | string | null;
};

export const ledgerEntryOf = (row: LedgerRow): LedgerEntry => ({
  ...row,
  createdAt: new Date(row.createdAt),
  settledAt: row.settledAt === null ? null : new Date(row.settledAt),
});
