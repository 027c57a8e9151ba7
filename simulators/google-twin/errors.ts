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
