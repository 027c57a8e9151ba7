import type { ErrorRequestHandler } from 'express';
import { ZodError } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { ApiError } from './api-error';
import { refusalStatus } from './error-statuses';
import { isDatabaseUnavailable } from './database-errors';
import { isTemporalUnavailable } from './temporal-errors';
import { log } from '../../lib/log';

interface BodyParserError {
  type?: string;
  status?: number;
  /** The cap a body went over (entity.too.large), in bytes. */
  limit?: number;
}

/** Why body-parser refused a body, for each of its 4xx refusals other than the size (413). */
const UNREADABLE_BODY: Record<string, string> = {
  'entity.parse.failed': 'request body is not valid JSON',
  'charset.unsupported': 'request body is not in a UTF charset',
  'encoding.unsupported': 'request body has a Content-Encoding other than gzip, deflate, br or identity',
  'request.aborted': 'request body was cut short',
  'request.size.invalid': 'request body is not as long as its Content-Length',
};

/**
 * The one place where failures become the spec's error bodies: a refusal is answered with its code's status
 * (api/http/error-statuses.ts). Nothing internal leaks out.
 */
export const errorHandler: ErrorRequestHandler = (error, req, res, next) => {
  if (res.headersSent) return next(error);
  const { status, body, headers } = toErrorResponse(error, (res.locals.validationStatus as number | undefined) ?? 400);
  // Only the unexpected is logged: refusals are the contract working. Never the request's headers.
  if (status === 500) log.error({ err: error, method: req.method, path: req.path }, 'request failed unexpectedly');
  res.set(headers).status(status).json(body);
};

function toErrorResponse(error: unknown, validationStatus: number) {
  // A refusal of a code that is never an HTTP answer (a Temporal failure type) is a bug: answered 500 below.
  const refused = error instanceof Refusal ? refusalResponse(error, validationStatus) : undefined;
  if (refused) return refused;
  if (error instanceof ApiError) {
    return { status: error.status, body: { error: error.code, ...error.extras }, headers: error.headers };
  }
  if (error instanceof ZodError) {
    const issues = error.issues.map(({ path, message, code }) => ({ path: path.map(String), message, code }));
    return { status: validationStatus, body: { error: ErrorCode.invalid_body, issues }, headers: {} };
  }
  const parserError = error as BodyParserError;
  if (parserError.type === 'entity.too.large') {
    // The API's bodies are held to 1 MB; a signed public webhook's to its own smaller cap (api/http/register-routes.ts).
    const over =
      parserError.limit === undefined || parserError.limit >= 1024 * 1024 ? '1 MB' : `${parserError.limit} bytes`;
    return {
      status: 413,
      body: { error: ErrorCode.internal_error, detail: `request body is over ${over}` },
      headers: {},
    };
  }
  const unreadable = parserError.type ? UNREADABLE_BODY[parserError.type] : undefined;
  if (unreadable) return { status: 400, body: { error: ErrorCode.internal_error, detail: unreadable }, headers: {} };
  const unavailable = isDatabaseUnavailable(error)
    ? ErrorCode.database_unavailable
    : isTemporalUnavailable(error)
      ? ErrorCode.temporal_unavailable
      : undefined;
  if (unavailable) return refusalResponse(new Refusal(unavailable, {}, { retryAfterSeconds: 5 }), validationStatus)!;
  return { status: 500, body: { error: ErrorCode.internal_error }, headers: {} };
}

/** A refusal as answered: its code's status, `{ error: code, ...extras }`, and Retry-After when it says when. */
function refusalResponse({ code, extras, retryAfterSeconds }: Refusal, validationStatus: number) {
  const status = refusalStatus(code, validationStatus);
  if (status === null) return undefined;
  const headers: Record<string, string> =
    retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) };
  return { status, body: { error: code, ...extras }, headers };
}
