import type { RunSql } from '../run-sql';
import { CreditWorkspaceNotFoundError, InsufficientCreditsError } from './credit-errors';
import {
  LEDGER_COLUMNS,
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

/** The insert's foreign key refused the workspace (Prisma and pg word it differently; both name the constraint). */
function isMissingWorkspace(error: unknown): boolean {
  let current = error as { message?: string; cause?: unknown; meta?: Record<string, unknown> } | undefined;
  for (let depth = 0; current && depth < 4; depth++) {
    const meta = current.meta ? JSON.stringify(current.meta) : '';
    if (`${current.message ?? ''} ${meta}`.includes('CreditLedgerEntry_workspaceId_fkey')) return true;
    current = current.cause as typeof current;
  }
  return false;
}

/**
 * Writes one ledger entry and moves the workspace's balance by its amount, inside the caller's
 * transaction (a thrown error rolls both back). Two statements:
 * 1. the entry is inserted first, `ON CONFLICT ("workspaceId", "idempotencyKey") DO NOTHING`: a key used
 *    before answers the first entry and never reaches the balance (a concurrent insert of the same key
 *    waits for the first transaction, then finds its entry or, if it rolled back, inserts);
 * 2. one conditional statement moves the balance and writes the balance after into the entry:
 *    `UPDATE "Workspace" SET "creditBalance" = "creditBalance" + amount WHERE ... AND "creditBalance" >= required`.
 *    The row lock serialises concurrent writers and the condition is evaluated on the newest balance,
 *    so no interleaving takes it below zero. No row: InsufficientCreditsError (or the workspace is gone).
 * The workspace row is locked only from statement 2 to the commit.
 */
export async function applyEntry(sql: RunSql, request: EntryRequest): Promise<AppliedEntry> {
  const { workspaceId, idempotencyKey } = request;
  let inserted: Array<{ id: string }>;
  try {
    inserted = await sql<{ id: string }>(
      `INSERT INTO "CreditLedgerEntry" (id, "workspaceId", kind, amount, status, "heldFor", "holdId",
         "referenceType", "referenceId", actor, "actorId", "idempotencyKey")
       VALUES (gen_random_uuid(), $1::uuid, $2::"CreditKind", $3::numeric, $4::"CreditEntryStatus",
         $5::"CreditKind", $6::uuid, $7, $8, $9::"CreditActor", $10, $11)
       ON CONFLICT ("workspaceId", "idempotencyKey") DO NOTHING
       RETURNING id::text AS id`,
      workspaceId,
      request.kind,
      creditString(request.units),
      request.status,
      request.heldFor ?? null,
      request.holdId ?? null,
      request.reference?.type ?? null,
      request.reference?.id ?? null,
      request.actor.type,
      request.actor.id ?? null,
      idempotencyKey,
    );
  } catch (error) {
    if (isMissingWorkspace(error)) throw new CreditWorkspaceNotFoundError(workspaceId);
    throw error;
  }
  const id = inserted[0]?.id;
  if (id === undefined) return { entry: (await entryByKey(sql, workspaceId, idempotencyKey))!, duplicate: true };
  const required = creditString(Math.max(0, -request.units));
  const [row] = await sql<LedgerRow>(
    `WITH moved AS (
       UPDATE "Workspace" SET "creditBalance" = "creditBalance" + $2::numeric
       WHERE id = $1::uuid AND "deletedAt" IS NULL AND "creditBalance" >= $3::numeric
       RETURNING "creditBalance")
     UPDATE "CreditLedgerEntry" SET "balanceAfter" = moved."creditBalance" FROM moved
     WHERE "CreditLedgerEntry".id = $4::uuid
     RETURNING ${LEDGER_COLUMNS}`,
    workspaceId,
    creditString(request.units),
    required,
    id,
  );
  if (row) return { entry: ledgerEntryOf(row), duplicate: false };
  const [workspace] = await sql<{ balance: string }>(
    `SELECT "creditBalance"::text AS balance FROM "Workspace" WHERE id = $1::uuid AND "deletedAt" IS NULL`,
    workspaceId,
  );
  if (!workspace) throw new CreditWorkspaceNotFoundError(workspaceId);
  throw new InsufficientCreditsError(workspaceId, normalisedCredits(workspace.balance), required);
}
