import type { Prisma } from '../../generated/prisma/client';
import { InsufficientCreditsError } from '../../lib/credits/credit-errors';
import type { CreditKind } from '../../lib/credits/ledger-store';
import { normalisedCredits } from '../../lib/credits/money';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { cursorPage, type CursorPosition } from '../http/pagination';
import type { AppServices } from '../app-services';
import { balanceAndPendingHolds, ledgerPage } from './credit-store';

/** A refusal of the credit functions as the API answers it: 402 insufficient_credits with balance and required. */
export function paymentRequired(error: unknown): unknown {
  if (!(error instanceof InsufficientCreditsError)) return error;
  return new Refusal(ErrorCode.insufficient_credits, { balance: error.balance, required: error.required });
}

/** The balance (spendable now: holds are already taken out of it) and what pending holds reserve. */
export async function creditBalance(services: AppServices, principal: Principal) {
  const row = await balanceAndPendingHolds(services.db, principal.workspaceId);
  return { balance: normalisedCredits(row.balance), pendingHolds: normalisedCredits(row.pendingHolds) };
}

export interface LedgerQuery {
  limit: number;
  cursor?: CursorPosition;
  kind?: CreditKind;
  from?: string;
  to?: string;
}

type EntryRow = Prisma.CreditLedgerEntryGetPayload<object>;

const entryView = (entry: EntryRow) => ({
  id: entry.id,
  kind: entry.kind,
  amount: normalisedCredits(entry.amount.toFixed(4)),
  balanceAfter: normalisedCredits(entry.balanceAfter!.toFixed(4)),
  status: entry.status,
  heldFor: entry.heldFor,
  holdId: entry.holdId,
  referenceType: entry.referenceType,
  referenceId: entry.referenceId,
  actor: entry.actor,
  actorId: entry.actorId,
  idempotencyKey: entry.idempotencyKey,
  createdAt: entry.createdAt.toISOString(),
  settledAt: entry.settledAt?.toISOString() ?? null,
});

/** The workspace's ledger, newest first, by cursor, with the count of entries matching the filters. */
export async function listLedger(services: AppServices, principal: Principal, query: LedgerQuery) {
  const where: Prisma.CreditLedgerEntryWhereInput = {
    workspaceId: principal.workspaceId,
    ...(query.kind && { kind: query.kind }),
    ...((query.from || query.to) && {
      createdAt: { ...(query.from && { gte: new Date(query.from) }), ...(query.to && { lt: new Date(query.to) }) },
    }),
  };
  const { rows, totalCount } = await ledgerPage(services.db, where, query);
  return { ...cursorPage(rows, query.limit, entryView), totalCount };
}
