import { ErrorCode } from '../../lib/error-codes';

/** A refusal that maps to one of the spec's error bodies: { error: code, ...extras }. */
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

export const forbidden = (requiredPermission?: string) =>
  new ApiError(403, ErrorCode.forbidden, requiredPermission ? { requiredPermission } : {});
