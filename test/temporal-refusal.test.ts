import { createRequire } from 'node:module';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../lib/error-codes';
import { refusalOf } from '../lib/temporal/refusal';

const failedActivity = (cause: Error) =>
  new ActivityFailure('Activity task failed', 'sendWhatsAppMessage', '1', RetryState.NON_RETRYABLE_FAILURE, 'w', cause);

describe('lib/temporal/refusal.ts', () => {
  it("unwraps an activity's refusal: its type, message and first detail", () => {
    const refused = ApplicationFailure.create({
      type: ErrorCode.provider_error,
      message: 'Recipient phone number not in allowed list',
      nonRetryable: true,
      details: [{ code: 131030, title: 'Recipient phone number not in allowed list' }, 'ignored'],
    });
    const expected = {
      type: ErrorCode.provider_error,
      message: 'Recipient phone number not in allowed list',
      detail: { code: 131030, title: 'Recipient phone number not in allowed list' },
    };
    expect(refusalOf(failedActivity(refused))).toEqual(expected);
    // The ApplicationFailure itself (an Update's handler or validator refusing) reads the same.
    expect(refusalOf(refused)).toEqual(expected);
    expect(refusalOf(failedActivity(ApplicationFailure.create({ message: 'no type' })))).toEqual({
      type: null,
      message: 'no type',
      detail: undefined,
    });
  });

  it('finds none in a timeout, a cancellation, or an error that is not a failure', () => {
    expect(refusalOf(failedActivity(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)))).toBe(
      undefined,
    );
    expect(refusalOf(new CancelledFailure('cancelled'))).toBe(undefined);
    expect(refusalOf(new Error('boom'))).toBe(undefined);
    expect(refusalOf({ type: ErrorCode.sheet_not_found, message: 'a look-alike' })).toBe(undefined);
    expect(refusalOf(undefined)).toBe(undefined);
  });

  it("recognises failures made by another copy of @temporalio/common, as the workflow sandbox's are", () => {
    const require = createRequire(import.meta.url);
    const failureModule = require.resolve('@temporalio/common/lib/failure');
    const cached = require.cache[failureModule];
    delete require.cache[failureModule];
    try {
      const other = require('@temporalio/common/lib/failure') as typeof import('@temporalio/common');
      expect(other.ApplicationFailure).not.toBe(ApplicationFailure);
      const refused = other.ApplicationFailure.create({ type: ErrorCode.sheet_not_found, message: 'gone' });
      const failure = new other.ActivityFailure(
        'failed',
        'syncSheetChunk',
        '1',
        RetryState.NON_RETRYABLE_FAILURE,
        'w',
        refused,
      );
      expect(refusalOf(failure)?.type).toBe(ErrorCode.sheet_not_found);
    } finally {
      require.cache[failureModule] = cached;
    }
  });
});
