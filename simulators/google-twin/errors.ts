/**
 * Google's error envelope, `{ error: { code, message, status } }` (https://cloud.google.com/apis/design/errors): what
 * every Sheets API v4 error answers, with the canonical status names of google.rpc.Code.
 */
export interface GoogleErrorBody {
  error: { code: number; message: string; status: string };
}

export class GoogleApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
    /** Seconds, sent as Retry-After (Google sends none on quota errors; the twin does when told to). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  get body(): GoogleErrorBody {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}

/** The errors the twin answers, worded as the Sheets API words them. */
export const GOOGLE_ERRORS = {
  unauthenticated: () =>
    new GoogleApiError(
      401,
      'UNAUTHENTICATED',
      'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
    ),
  permissionDenied: () => new GoogleApiError(403, 'PERMISSION_DENIED', 'The caller does not have permission'),
  insufficientScopes: () =>
    new GoogleApiError(403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.'),
  notFound: () => new GoogleApiError(404, 'NOT_FOUND', 'Requested entity was not found.'),
  invalid: (message: string) => new GoogleApiError(400, 'INVALID_ARGUMENT', message),
  /** A range beyond the tab's grid, as Google words it. */
  gridLimits: (range: string, rows: number, columns: number) =>
    new GoogleApiError(
      400,
      'INVALID_ARGUMENT',
      `Range (${range}) exceeds grid limits. Max rows: ${rows}, max columns: ${columns}`,
    ),
  /** The per-user write quota, as Google words it; `injected`: a 429 the test asked for. */
  quota: (project: string, retryAfterSeconds?: number) =>
    new GoogleApiError(
      429,
      'RESOURCE_EXHAUSTED',
      `Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:${project}'.`,
      retryAfterSeconds,
    ),
} as const;

/**
 * The Calendar API v3's errors, in the envelope its guide shows (developers.google.com/workspace/calendar/api/guides/errors):
 * `{ error: { errors: [{ domain, reason, message }], code, message } }`.
 */
export class CalendarApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly domain = 'global',
  ) {
    super(message);
  }

  get body() {
    return {
      error: {
        errors: [{ domain: this.domain, reason: this.reason, message: this.message }],
        code: this.code,
        message: this.message,
      },
    };
  }
}

export const CALENDAR_ERRORS = {
  unauthenticated: () => new CalendarApiError(401, 'authError', 'Invalid Credentials'),
  insufficientScopes: () =>
    new CalendarApiError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.'),
  accessLevel: (level: string) =>
    new CalendarApiError(403, 'requiredAccessLevel', `You need to have ${level} access to this calendar.`, 'calendar'),
  serviceAccountAttendees: () =>
    new CalendarApiError(
      403,
      'forbiddenForServiceAccounts',
      'Service accounts cannot invite attendees without Domain-Wide Delegation of Authority.',
      'calendar',
    ),
  notFound: () => new CalendarApiError(404, 'notFound', 'Not Found'),
  duplicate: () => new CalendarApiError(409, 'duplicate', 'The requested identifier already exists.'),
  deleted: () => new CalendarApiError(410, 'deleted', 'Resource has been deleted'),
  invalid: (message: string, reason = 'invalid') => new CalendarApiError(400, reason, message),
  timeRangeEmpty: () => new CalendarApiError(400, 'timeRangeEmpty', 'The specified time range is empty.', 'calendar'),
} as const;
