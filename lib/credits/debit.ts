import { applyEntry, type AppliedEntry } from './apply-entry';
import type { ChargeKind, CreditActor, CreditReference, CreditStore } from './ledger-store';
import { creditUnits } from './money';

export interface DebitRequest {
  workspaceId: string;
  kind: ChargeKind;
  /** What is charged, positive, at most 4 decimals: "0.5000" or 0.5. */
  amount: string | number;
  reference: CreditReference | null;
  actor: CreditActor;
  /** Unique per workspace: a retry with the same key answers the first entry and charges nothing. */
  idempotencyKey: string;
}

const positiveUnits = (amount: string | number) => {
  const units = creditUnits(amount);
  if (units <= 0) throw new RangeError(`an amount must be positive, not ${amount}`);
  return units;
};

/**
 * Charges an operation at once (a posted entry of its kind, amount negative), atomically and
 * idempotently, in one autocommitted statement (applyEntry). A balance that does not cover it:
 * InsufficientCreditsError, nothing written.
 */
export function debit(store: CreditStore, request: DebitRequest): Promise<AppliedEntry> {
  const units = positiveUnits(request.amount);
  return applyEntry(store.sql, { ...request, units: -units, status: 'posted' });
}

export interface CreditRequest {
  workspaceId: string;
  kind: 'grant' | 'refund';
  /** What is added, positive. */
  amount: string | number;
  reference: CreditReference | null;
  actor: CreditActor;
  idempotencyKey: string;
}

/** Adds credits (an operator's grant, a refund of a charge) as a posted entry; idempotent by key as debit. */
export function credit(store: CreditStore, request: CreditRequest): Promise<AppliedEntry> {
  const units = positiveUnits(request.amount);
  return applyEntry(store.sql, { ...request, units, status: 'posted' });
}
