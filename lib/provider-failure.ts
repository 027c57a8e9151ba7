import { ErrorCode } from './error-codes';

/**
 * A provider failed. `upstreamStatus` says how, in HTTP terms as the spec's provider_error carries it:
 * 503 it cannot be run (a binary missing), 500 it ran and failed, 504 it took longer than allowed.
 */
export class ProviderFailure extends Error {
  readonly type = ErrorCode.provider_error;
  constructor(
    readonly upstreamStatus: 500 | 503 | 504,
    message: string,
  ) {
    super(message);
  }
}
