/**
 * The typed failures of the credit functions. The API answers InsufficientCredits with 402
 * insufficient_credits (balance, required); an activity fails non-retryably with the same code.
 */
export class InsufficientCreditsError extends Error {
  constructor(
    readonly workspaceId: string,
    /** The balance when the debit was refused, as a decimal string. */
    readonly balance: string,
    /** What the operation needed, as a decimal string. */
    readonly required: string,
  ) {
    super(`workspace ${workspaceId} has ${balance} credits; ${required} required`);
  }
}

/** post or void of a hold key no hold was taken under. */
export class HoldNotFoundError extends Error {
  constructor(
    readonly workspaceId: string,
    readonly idempotencyKey: string,
  ) {
    super(`no hold ${idempotencyKey} in workspace ${workspaceId}`);
  }
}

/** post of a voided hold, or void of a posted one: a hold is settled once, one way. */
export class HoldAlreadySettledError extends Error {
  constructor(
    readonly idempotencyKey: string,
    readonly status: 'posted' | 'voided',
  ) {
    super(`hold ${idempotencyKey} is already ${status}`);
  }
}

/** A credit operation on a workspace that does not exist (or is deleted). */
export class CreditWorkspaceNotFoundError extends Error {
  constructor(readonly workspaceId: string) {
    super(`workspace ${workspaceId} not found`);
  }
}
