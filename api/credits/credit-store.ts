import type { Prisma } from '../../generated/prisma/client';
import { afterCursor, type CursorPosition } from '../http/pagination';
import type { AppServices } from '../app-services';

/** The credits API's SQL (docs/features/credits.md): what the API reads of the ledger; its writes are lib/credits/. */

type Db = AppServices['db'];

/** The balance and what pending holds reserve, as decimal text. */
export async function balanceAndPendingHolds(db: Db, workspaceId: string) {
  const [row] = await db.$queryRaw<Array<{ balance: string; pendingHolds: string }>>`
    SELECT w."creditBalance"::text AS balance,
      COALESCE((SELECT -sum(amount) FROM "CreditLedgerEntry"
        WHERE "workspaceId" = w.id AND kind = 'hold' AND status = 'pending'), 0)::text AS "pendingHolds"
    FROM "Workspace" w WHERE w.id = ${workspaceId}::uuid`;
  return row!;
}

/** A page of the ledger entries matching `where`, newest first, one more than the limit, and their count. */
export async function ledgerPage(
  db: Db,
  where: Prisma.CreditLedgerEntryWhereInput,
  query: { limit: number; cursor?: CursorPosition },
) {
  const [rows, totalCount] = await Promise.all([
    db.creditLedgerEntry.findMany({
      where: { ...where, ...afterCursor(query.cursor) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: query.limit + 1,
    }),
    db.creditLedgerEntry.count({ where }),
  ]);
  return { rows, totalCount };
}
