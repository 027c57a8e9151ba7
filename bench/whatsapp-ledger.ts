import type { Database } from '../lib/database';

/**
 * The WhatsApp benches' check of a workspace's credits after a run: the ledger sums to the balance, and
 * every message's hold (one per message, key whatsapp_message:<id>) is as its status says: posted once
 * delivered or read, with exactly one charge; voided once failed; pending otherwise.
 */
export async function whatsAppLedgerCheck(db: Database, workspaceId: string) {
  const [totals] = await db.$queryRawUnsafe<Array<{ balance: string; ledger: string }>>(
    `SELECT w."creditBalance"::text AS balance, coalesce(sum(e.amount), 0)::text AS ledger
       FROM "Workspace" w LEFT JOIN "CreditLedgerEntry" e ON e."workspaceId" = w.id
      WHERE w.id = $1::uuid GROUP BY w.id`,
    workspaceId,
  );
  const [holds] = await db.$queryRawUnsafe<Array<Record<string, number>>>(
    `WITH messages AS (
       SELECT m.id, m.status::text AS status,
              (SELECT h.status::text FROM "CreditLedgerEntry" h
                WHERE h."workspaceId" = m."workspaceId" AND h."idempotencyKey" = 'whatsapp_message:' || m.id) AS hold,
              (SELECT count(*) FROM "CreditLedgerEntry" c
                WHERE c."workspaceId" = m."workspaceId" AND c."idempotencyKey" = 'whatsapp_message:' || m.id || ':charge') AS charges
         FROM "WhatsAppMessage" m WHERE m."workspaceId" = $1::uuid AND m.direction = 'outbound')
     SELECT count(*)::int AS messages,
            count(*) FILTER (WHERE hold IS NULL)::int AS "withoutHold",
            count(*) FILTER (WHERE hold = 'pending')::int AS pending,
            count(*) FILTER (WHERE hold = 'posted')::int AS posted,
            count(*) FILTER (WHERE hold = 'voided')::int AS voided,
            count(*) FILTER (WHERE CASE
              WHEN status IN ('delivered', 'read') THEN hold <> 'posted' OR charges <> 1
              WHEN status = 'failed' THEN hold <> 'voided' OR charges <> 0
              ELSE hold <> 'pending' OR charges <> 0 END)::int AS "holdNotAsStatus"
       FROM messages`,
    workspaceId,
  );
  return {
    balance: totals!.balance,
    ledgerSum: totals!.ledger,
    ledgerSumsToBalance: Number(totals!.ledger) === Number(totals!.balance),
    holds: holds!,
  };
}
