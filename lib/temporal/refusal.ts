import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../error-codes';

/** What an activity refused with: its ApplicationFailure's type, message and first detail. */
export interface ActivityRefusal {
  /** The failure's type: for the project's own refusals, a code of lib/error-codes.ts. */
  type: string | null;
  message: string;
  /** Its first detail, as the refusing side gave it (unchecked: the caller knows what its activity sends). */
  detail: unknown;
}

/**
 * The refusal in a failed activity call: the ApplicationFailure that is an ActivityFailure's cause (or the error
 * itself, when it is one); undefined for anything else (a timeout, a cancellation, a failure of the workflow's own).
 * The one place that unwraps it, for workflows and the API alike. @temporalio/common's classes answer instanceof by a
 * symbol, so this holds in the workflow sandbox too, where this module is shared by every run.
 */
export function refusalOf(error: unknown): ActivityRefusal | undefined {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (!(failure instanceof ApplicationFailure)) return undefined;
  return { type: failure.type ?? null, message: failure.message, detail: failure.details?.[0] };
}

/**
 * What an activity throws when a row its run names is gone (deleted meanwhile, or its workspace removed): not_found,
 * non-retryable, as no later attempt finds it again (tenantDataRefusals, lib/temporal/retry-policies.ts).
 */
export const rowNotFound = (what: string) =>
  ApplicationFailure.create({ type: ErrorCode.not_found, message: `${what} not found`, nonRetryable: true });
