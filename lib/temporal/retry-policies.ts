import type { RetryPolicy } from '@temporalio/common';
import { ErrorCode } from '../error-codes';

/**
 * Every activity retry policy of the workflows, named by what it is for (docs/architecture.md). A
 * workflow's proxyActivities or proxyLocalActivities takes one of these as `retry`; eslint refuses a retry-policy
 * object literal under workflows/. Pure data, shared by every cached workflow run (worker/shared-workflow-modules.ts).
 * Temporal reads a policy when it schedules an attempt: a change here applies to runs in flight at their next
 * activity, and does not break replay (an activity's retry policy is not compared with its history).
 */

/**
 * Failures over tenant data that no retry can change, whoever throws them (docs/cpu-budget.md#retry-policies-over-tenant-data):
 * the row a run names is gone (not_found), the ledger has no such hold or workspace, or refuses the amount
 * (lib/credits/credit-errors.ts; an error thrown as it is reaches Temporal typed by its class name, checked by
 * test/retry-policies.test.ts), a value out of range (RangeError). Every policy retried without a maximum lists them:
 * a poison task must not move from worker to worker for ever. A database or network failure is none of these and
 * stays retried.
 */
export const tenantDataRefusals: readonly string[] = [
  ErrorCode.not_found,
  'HoldNotFoundError',
  'CreditWorkspaceNotFoundError',
  'InsufficientCreditsError',
  'RangeError',
];

/**
 * Short, idempotent bookkeeping against PostgreSQL (a status written, a hold voided, a file removed): retried
 * without limit, 1 s doubling to a minute apart, so a database outage only delays the run; a refusal of the
 * tenant's data (tenantDataRefusals) stops at once.
 */
export const untilDatabaseAnswers: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  nonRetryableErrorTypes: [...tenantDataRefusals],
};

/** A journey run's own bookkeeping: as untilDatabaseAnswers, and a run whose row is gone stops at once. */
export const journeyRunBookkeeping: RetryPolicy = {
  ...untilDatabaseAnswers,
  nonRetryableErrorTypes: [...tenantDataRefusals, ErrorCode.journey_run_not_found],
};

/**
 * A campaign transition's status write and the leads' wake-up: an Update waits on them, so attempts are never
 * more than 30 s apart.
 */
export const campaignTransition: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  nonRetryableErrorTypes: [...tenantDataRefusals],
};

/** A store's webhook delivery applied: 4 tries over about 4 s, then the delivery is marked failed. */
export const storeDeliveryApplied: RetryPolicy = {
  initialInterval: '500 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 4,
};

/**
 * One page of a store's customers read through the Admin API and applied (activities/crm/crm-import.ts): 10 tries,
 * 1 s doubling to a minute apart (about 8 minutes); a store that refuses the token (provider_error) stops at once.
 * Throttling is not a failure: the workflow waits it out with a timer.
 */
export const storeAdminPage: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 10,
  nonRetryableErrorTypes: [ErrorCode.provider_error],
};

/**
 * Short steps around one call (the dial, its reconciliation, its billing and aftermath): 20 tries, 1 s doubling
 * to a minute apart (about 17 minutes in all).
 */
export const callSteps: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 20,
};

/** A lead's ladder (its call steps and its bookkeeping): as callSteps; a lead whose row is gone stops at once. */
export const leadDialSteps: RetryPolicy = {
  ...callSteps,
  nonRetryableErrorTypes: [ErrorCode.lead_not_found],
};

/** A WHATSAPP lead's bookkeeping: as callSteps; a lead gone, or its campaign without a sender, stops at once. */
export const leadMessageSteps: RetryPolicy = {
  ...callSteps,
  nonRetryableErrorTypes: [ErrorCode.lead_not_found, ErrorCode.whatsapp_campaign_not_configured],
};

/**
 * The carrier makes a transcript once the call has ended: until it has one the activity fails with
 * call_has_no_transcript, retried for about a minute in all (2 + 4 + 8 + 16 + 30 s).
 */
export const untilCarrierHasTranscript: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 6,
};

/**
 * What no retry of a call intelligence step can change: the call is gone, has no transcript, or its text overran the
 * CPU budget of the rules (docs/cpu-budget.md). The activities throw these non-retryable already; listed here too, so
 * that a thrower that forgets stays bounded.
 */
const callIntelligenceRefusals = [
  ErrorCode.call_not_found,
  ErrorCode.call_has_no_transcript,
  ErrorCode.cpu_budget_exceeded,
];

/** A model-backed extractor may fail for a while: 10 tries, 2 s doubling to a minute apart. */
export const callFieldsExtracted: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 10,
  nonRetryableErrorTypes: callIntelligenceRefusals,
};

/**
 * A call's intelligence evaluated by the rules (in a CPU budget thread) and written: as untilDatabaseAnswers, so a
 * database outage only delays it, but a refusal of the call's data stops at once.
 */
export const callIntelligenceStored: RetryPolicy = {
  ...untilDatabaseAnswers,
  nonRetryableErrorTypes: [...tenantDataRefusals, ...callIntelligenceRefusals],
};

/** A journey node's side effect (a webhook, a message): 5 tries, then the run asks an operator (needs_recovery). */
export const journeyNodeThenOperator: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 5,
};

/**
 * A heartbeating chunk of an export that resumes from its last checkpoint: 30 tries, 1 s doubling to a minute
 * apart, then the export is marked failed.
 */
export const resumableExportChunk: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 30,
};

/**
 * A live sheet's chunk (and its reset): as resumableExportChunk, then the sync is marked failed and tried again at
 * the next scheduled time; a sheet whose row is gone stops at once (its spreadsheet is then deleted).
 */
export const resumableSheetChunk: RetryPolicy = {
  ...resumableExportChunk,
  nonRetryableErrorTypes: [ErrorCode.sheet_not_found],
};

/** Packaging an export's workbook from its rows file: 10 tries, 1 s doubling to a minute apart. */
export const workbookPackaged: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 10,
};

/**
 * A recording analysed by the speech worker (up to 30 minutes each): a failure of ours is tried 3 times in all, well
 * inside ABANDONED_HOLD_AGE_MS, then the analysis fails. A refusal of the recording is not retried.
 */
export const speechAnalysed: RetryPolicy = {
  initialInterval: '10 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 3,
};

/**
 * A message handed to the WhatsApp provider: a provider that is down or throttling is retried for about a day (150
 * tries, 1 s doubling to 10 minutes apart), as a message accepted is never dropped; a refusal is not retried.
 */
export const providerForADay: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '10 minutes',
  maximumAttempts: 150,
};

/**
 * A result webhook's delivery: 5 s doubling to one attempt an hour, without limit; its schedule-to-close timeout (26
 * hours) ends it, so that a receiver down for a whole day still gets the event.
 */
export const receiverForADay: RetryPolicy = {
  initialInterval: '5 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 hour',
  nonRetryableErrorTypes: [...tenantDataRefusals],
};

/**
 * An appointment booked at the calendar provider and recorded (activities/calendar/appointments.ts): 1 s doubling to
 * 30 s apart, for 20 tries (some ten minutes), the booking key making every try look the booking up first; the
 * provider's refusal of the slot (calendar_refused: taken, not bookable) is not retried.
 */
export const appointmentBooked: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 20,
  nonRetryableErrorTypes: [...tenantDataRefusals, 'calendar_refused'],
};
