import { ErrorCode } from '../../lib/error-codes';

/**
 * A route's own HTTP answer to a failure, status and headers included: { error: code, ...extras }. Only route
 * tables and api/http use it (eslint.config.js), where a route answers a code with another status than
 * api/http/error-statuses.ts gives it (test/openapi.test.ts lists each case). Services refuse with a
 * Refusal (lib/refusal.ts), which carries no status.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly extras: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
  }
}
