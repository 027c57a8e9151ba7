import { ErrorCode } from './error-codes';

export interface RefusalOptions {
  /** How long until asking again may succeed, in seconds (over HTTP, the Retry-After header). */
  retryAfterSeconds?: number;
}

/**
 * A refusal in the domain's words: a code of lib/error-codes.ts and the extras that explain it (`status`,
 * `detail`, the figures behind a limit). Services, the door, lib/ and the CLI's commands refuse with it; it
 * carries no HTTP status: api/http/error-statuses.ts gives each code its status, once, at the edge, and
 * the error handler answers `{ error: code, ...extras }` with it.
 */
export class Refusal extends Error {
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    readonly extras: Record<string, unknown> = {},
    options: RefusalOptions = {},
  ) {
    super(code);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * The key lacks `requiredPermission`; without one, the resource is unknown or another workspace's (the same
 * refusal, so that nothing tells them apart).
 */
export const forbidden = (requiredPermission?: string) =>
  new Refusal(ErrorCode.forbidden, requiredPermission ? { requiredPermission } : {});
