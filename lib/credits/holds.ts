import type { RunSql } from '../run-sql';
import { applyEntry, entryByKey, type AppliedEntry } from './apply-entry';
import { HoldAlreadySettledError, HoldNotFoundError } from './credit-errors';
import {
  LEDGER_COLUMNS,
  ledgerEntryOf,
  type ChargeKind,
  type CreditActor,
  type CreditReference,
  type CreditStore,
  type LedgerEntry,
  type LedgerRow,
} from './ledger-store';
import { creditString, creditUnits } from './money';

/*
 * Holds, for operations whose cost is known at their end (docs/features/credits.md, "Holds"). Three kinds of entry:
 * - the hold: kind hold, heldFor the charge's kind, amount -held, status pending. The balance is reduced
 *   at once, so what is held cannot be spent twice;
 * - posting it with the final amount (final <= held): the hold becomes posted, a hold_release entry gives
 *   the held amount back (+held, key `<hold key>:release`) and a charge of heldFor's kind takes the final
 *   amount (-final, key `<hold key>:charge`; none when final is 0). Net: -final;
 * - voiding it: the hold becomes voided and a hold_release gives the held amount back. Net: 0.
 * The hold's status is the only column that ever changes, pending to posted or voided, once (the
 * trigger credit_ledger_append_only): every movement of the balance is an entry of its own, and the
 * amounts of a workspace always sum to its balance. Each function is idempotent by the hold's key.
 */

export interface HoldRequest {
  workspaceId: string;
  /** What the hold will be charged as when posted. */
  heldFor: ChargeKind;
  /** The least to reserve; refused (InsufficientCreditsError) when the balance does not cover it. */
  amount: string | number;
  /**
   * Reserve more when the balance allows: the largest whole multiple of `amount` up to this (a test call:
   * one minute at least, up to its longest length). Unset: exactly `amount`.
   */
  upTo?: string | number;
  reference: CreditReference | null;
  actor: CreditActor;
  idempotencyKey: string;
}

export interface SettledHold {
  hold: LedgerEntry;
  release: LedgerEntry;
  /** The charge of a posted hold; null when voided, or posted with 0. */
  charge: LedgerEntry | null;
  /** true: the hold was settled so before; answered as it was. */
  duplicate: boolean;
}

/** hold() inside a transaction of the caller's (the API records a test call and its hold in one). */
export async function holdIn(sql: RunSql, request: HoldRequest): Promise<AppliedEntry> {
  const existing = await entryByKey(sql, request.workspaceId, request.idempotencyKey);
  if (existing) return { entry: existing, duplicate: true };
  const step = creditUnits(request.amount);
  if (step <= 0) throw new RangeError(`a hold must be positive, not ${request.amount}`);
  let units = step;
  if (request.upTo !== undefined) {
    // Read under the row lock the debit takes anyway, so the amount fits the balance it is taken from.
    const [row] = await sql<{ balance: string }>(
      `SELECT "creditBalance"::text AS balance FROM "Workspace" WHERE id = $1::uuid FOR UPDATE`,
      request.workspaceId,
    );
    const affordable = row ? Math.floor(creditUnits(row.balance) / step) * step : 0;
    units = Math.max(step, Math.min(creditUnits(request.upTo), affordable));
  }
  const { upTo: _upTo, amount: _amount, ...entry } = request;
  return applyEntry(sql, { ...entry, kind: 'hold', units: -units, status: 'pending' });
}

/** Reserves credits for an operation (a pending hold entry); a retry with the key answers the first hold. */
export function hold(store: CreditStore, request: HoldRequest): Promise<AppliedEntry> {
  return store.transaction((sql) => holdIn(sql, request));
}

export interface SettleRequest {
  workspaceId: string;
  /** The key the hold was taken under. */
  idempotencyKey: string;
  actor: CreditActor;
}

/** Marks the pending hold settled (the one change the ledger allows); null when it is not pending. */
async function settle(sql: RunSql, request: SettleRequest, status: 'posted' | 'voided') {
  const [row] = await sql<LedgerRow>(
    `UPDATE "CreditLedgerEntry" SET status = $3::"CreditEntryStatus", "settledAt" = now()
     WHERE "workspaceId" = $1::uuid AND "idempotencyKey" = $2 AND kind = 'hold' AND status = 'pending'
     RETURNING ${LEDGER_COLUMNS}`,
    request.workspaceId,
    request.idempotencyKey,
    status,
  );
  return row ? ledgerEntryOf(row) : null;
}

/** A hold settled before: as it was settled, if settled the way asked; otherwise the typed refusal. */
async function settledBefore(sql: RunSql, request: SettleRequest, status: 'posted' | 'voided'): Promise<SettledHold> {
  const hold = await entryByKey(sql, request.workspaceId, request.idempotencyKey);
  if (!hold || hold.kind !== 'hold') throw new HoldNotFoundError(request.workspaceId, request.idempotencyKey);
  if (hold.status === 'pending') throw new Error(`hold ${request.idempotencyKey} is pending and could not be settled`);
  if (hold.status !== status) throw new HoldAlreadySettledError(request.idempotencyKey, hold.status);
  const [release, charge] = await Promise.all([
    entryByKey(sql, request.workspaceId, `${request.idempotencyKey}:release`),
    entryByKey(sql, request.workspaceId, `${request.idempotencyKey}:charge`),
  ]);
  return { hold, release: release!, charge, duplicate: true };
}

const releaseOf = (sql: RunSql, hold: LedgerEntry, request: SettleRequest) =>
  applyEntry(sql, {
    workspaceId: hold.workspaceId,
    kind: 'hold_release',
    units: -creditUnits(hold.amount),
    status: 'posted',
    holdId: hold.id,
    reference: hold.referenceType === null ? null : { type: hold.referenceType, id: hold.referenceId! },
    actor: request.actor,
    idempotencyKey: `${request.idempotencyKey}:release`,
  });

/**
 * Posts a hold with the final amount (at most what it holds; more is a RangeError, nothing written): the
 * held amount is released and the final amount charged, in one transaction. Idempotent: posting a posted
 * hold answers it; posting a voided one is HoldAlreadySettledError.
 */
export function postHold(store: CreditStore, request: SettleRequest & { amount: string | number }) {
  return store.transaction(async (sql): Promise<SettledHold> => {
    const hold = await settle(sql, request, 'posted');
    if (!hold) return settledBefore(sql, request, 'posted');
    const held = -creditUnits(hold.amount);
    const final = creditUnits(request.amount);
    if (final < 0 || final > held)
      throw new RangeError(
        `hold ${request.idempotencyKey} holds ${hold.amount.slice(1)}; cannot post ${request.amount}`,
      );
    const release = await releaseOf(sql, hold, request);
    const charge =
      final === 0
        ? null
        : await applyEntry(sql, {
            workspaceId: hold.workspaceId,
            kind: hold.heldFor!,
            units: -final,
            status: 'posted',
            holdId: hold.id,
            reference: hold.referenceType === null ? null : { type: hold.referenceType, id: hold.referenceId! },
            actor: request.actor,
            idempotencyKey: `${request.idempotencyKey}:charge`,
          });
    return { hold, release: release.entry, charge: charge?.entry ?? null, duplicate: false };
  });
}

/** Voids a hold: everything it held goes back. Idempotent; voiding a posted hold is HoldAlreadySettledError. */
export function voidHold(store: CreditStore, request: SettleRequest) {
  return store.transaction(async (sql): Promise<SettledHold> => {
    const hold = await settle(sql, request, 'voided');
    if (!hold) return settledBefore(sql, request, 'voided');
    const release = await releaseOf(sql, hold, request);
    return { hold, release: release.entry, charge: null, duplicate: false };
  });
}

/**
 * Settles the hold taken under `idempotencyKey`, if there is one (null otherwise: an operation recorded
 * before billing, or never held): `charge(heldUnits)` gives the final amount in units, and 0 voids it.
 * The one way every billed operation (test calls, analyses, WhatsApp messages) ends its hold.
 */
export async function settleHold(
  store: CreditStore,
  request: SettleRequest,
  charge: (heldUnits: number) => number,
): Promise<SettledHold | null> {
  const held = await store.transaction((sql) => entryByKey(sql, request.workspaceId, request.idempotencyKey));
  if (!held) return null;
  const units = charge(-creditUnits(held.amount));
  if (units === 0) return voidHold(store, request);
  return postHold(store, { ...request, amount: creditString(units) });
}
