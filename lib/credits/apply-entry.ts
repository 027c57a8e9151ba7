import type { RunSql } from '../run-sql';
import { CreditWorkspaceNotFoundError, InsufficientCreditsError } from './credit-errors';
import {
  LEDGER_COLUMNS,
  ledgerColumns,
  ledgerEntryOf,
  type ChargeKind,
  type CreditActor,
  type CreditKind,
  type CreditReference,
  type LedgerEntry,
  type LedgerRow,
} from './ledger-store';
import { creditString, normalisedCredits } from './money';

export interface EntryRequest {
  workspaceId: string;
  kind: CreditKind;
  /** Signed, in ten-thousandths: negative takes from the balance. */
  units: number;
  status: 'pending' | 'posted';
  heldFor?: ChargeKind;
  holdId?: string;
  reference?: CreditReference | null;
  actor: CreditActor;
  idempotencyKey: string;
}

export interface AppliedEntry {
  entry: LedgerEntry;
  /** true: an entry with this idempotency key existed; it is answered and the balance was not touched. */
  duplicate: boolean;
}

/** The entry of a workspace under an idempotency key, if any. */
export async function entryByKey(sql: RunSql, workspaceId: string, idempotencyKey: string) {
  const [row] = await sql<LedgerRow>(
    `SELECT ${LEDGER_COLUMNS} FROM "CreditLedgerEntry" WHERE "workspaceId" = $1::uuid AND "idempotencyKey" = $2`,
    workspaceId,
    idempotencyKey,
  );
  return row ? ledgerEntryOf(row) : null;
}

/** Every string of an error, its cause chain and its metadata (Prisma and pg carry PostgreSQL's message differently). */
function errorText(error: unknown, seen = new Set<unknown>(), depth = 0): string {
  if (typeof error === 'string') return error;
  if (!error || typeof error !== 'object' || seen.has(error) || depth > 5) return '';
  seen.add(error);
  const own = error instanceof Error ? [error.message] : [];
  return [...own, ...Object.values(error).map((value) => errorText(value, seen, depth + 1))].join(' ');
}

const INSUFFICIENT = /insufficient_credits balance=(-?\d+(?:\.\d+)?)/;

/**
 * Writes one ledger entry and moves the workspace's balance by its amount, atomically, in one statement:
 * the SQL function credit_apply_entry (migration credit_apply_entry_function), so that a debit outside a
 * transaction is one autocommitted statement, with no round trip while the Workspace row is locked.
 * Inside the caller's transaction it is part of that transaction.
 * 1. a key used before answers its first entry (duplicate) and never reaches the balance;
 * 2. one conditional statement moves the balance, `UPDATE "Workspace" SET "creditBalance" =
 *    "creditBalance" + amount WHERE id = w AND "creditBalance" >= required RETURNING`: the row lock
 *    serialises concurrent writers and the condition is evaluated on the newest balance, so no
 *    interleaving takes it below zero. Not covered: InsufficientCreditsError, nothing written;
 * 3. the entry is inserted with its balance after, `ON CONFLICT ("workspaceId", "idempotencyKey") DO
 *    NOTHING`: when a concurrent call with the same key committed first, the statement is rolled back
 *    whole (the balance move with it) and asked again, which answers that call's entry.
 */
export async function applyEntry(sql: RunSql, request: EntryRequest): Promise<AppliedEntry> {
  const { workspaceId, idempotencyKey } = request;
  const required = creditString(Math.max(0, -request.units));
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await sql<LedgerRow & { duplicate: boolean }>(
        `SELECT ${ledgerColumns('(applied.entry)')}, applied.duplicate
         FROM credit_apply_entry($1::uuid, $2::"CreditKind", $3::numeric, $4::numeric, $5::"CreditEntryStatus",
           $6::"CreditKind", $7::uuid, $8, $9, $10::"CreditActor", $11, $12) AS applied`,
        workspaceId,
        request.kind,
        creditString(request.units),
        required,
        request.status,
        request.heldFor ?? null,
        request.holdId ?? null,
        request.reference?.type ?? null,
        request.reference?.id ?? null,
        request.actor.type,
        request.actor.id ?? null,
        idempotencyKey,
      );
      const { duplicate, ...entry } = row!;
      return { entry: ledgerEntryOf(entry), duplicate };
    } catch (error) {
      const text = errorText(error);
      const balance = INSUFFICIENT.exec(text)?.[1];
      if (balance !== undefined) throw new InsufficientCreditsError(workspaceId, normalisedCredits(balance), required);
      if (text.includes('credit_workspace_not_found') || text.includes('CreditLedgerEntry_workspaceId_fkey'))
        throw new CreditWorkspaceNotFoundError(workspaceId);
      // The same key raced and lost: asked again, it finds the winner's entry. Only outside a transaction
      // of the caller's (inside one, the failed statement aborted it: the caller's transaction fails).
      if (!text.includes('credit_key_raced') || attempt > 1) throw error;
    }
  }
}
