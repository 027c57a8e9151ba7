import type { ErrorCode } from '../error-codes';

/**
 * A recording or a request the speech engine refuses, for a reason the caller can be told: the code comes
 * from lib/error-codes.ts (an API error body's `error`, an activity's non-retryable ApplicationFailure `type`)
 * and `details` are the figures behind it (for example `{ bytes, maxBytes }`). Anything else the engine
 * throws (sox or pocketsphinx missing, a crash) is an error of ours, worth a retry.
 */
export class SpeechFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'SpeechFailure';
  }
}
