/**
 * Telnyx's error body, `{ errors: [{ code, title, detail, source }] }` (components.schemas.call-control_Errors of the
 * vendored description), with the codes Telnyx's description and documentation give them.
 */
export interface TelnyxError {
  code: string;
  title: string;
  detail: string;
  source?: { pointer: string };
}

export class TelnyxApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: TelnyxError,
  ) {
    super(error.detail);
  }

  get body(): { errors: TelnyxError[] } {
    return { errors: [this.error] };
  }
}

const at = (pointer: string) => ({ pointer });

export const TELNYX_ERRORS = {
  /** 401, Telnyx's 10009: no key, or one the twin does not know. */
  authentication: () =>
    new TelnyxApiError(401, {
      code: '10009',
      title: 'Authentication failed',
      detail: 'The required authentication headers were either invalid or not included in the request.',
    }),
  /** 404, Telnyx's 10005: an unknown call (or another account's) or path. */
  notFound: (what: string) =>
    new TelnyxApiError(404, { code: '10005', title: 'Resource not found', detail: `${what} was not found.` }),
  missing: (name: string) =>
    new TelnyxApiError(422, {
      code: '10004',
      title: 'Missing required parameter',
      detail: `The '${name}' parameter is required and cannot be blank.`,
      source: at(`/${name}`),
    }),
  notE164: (name: string) =>
    new TelnyxApiError(422, {
      code: '10016',
      title: 'Phone number must be in +E164 format',
      detail: `The '${name}' parameter must be in E164 format.`,
      source: at(`/${name}`),
    }),
  invalidConnection: () =>
    new TelnyxApiError(422, {
      code: '10015',
      title: 'Invalid value for connection_id (Call Control App ID)',
      detail:
        'The requested connection_id (Call Control App ID) is either invalid or does not exist. Only Call Control Apps with valid webhook URL are accepted.',
      source: at('/connection_id'),
    }),
  enumerated: (name: string, values: readonly string[]) =>
    new TelnyxApiError(422, {
      code: '10032',
      title: 'Invalid enumerated value',
      detail: `The value must be one of: ${values.join(', ')}.`,
      source: at(`/${name}`),
    }),
  range: (name: string, min: number, max: number) =>
    new TelnyxApiError(422, {
      code: '10033',
      title: 'Value outside of range',
      detail: `The value is outside of allowed range ${min} to ${max}`,
      source: at(`/${name}`),
    }),
  invalid: (name: string, detail: string) =>
    new TelnyxApiError(422, { code: '10026', title: 'Invalid parameter type', detail, source: at(`/${name}`) }),
  ended: () =>
    new TelnyxApiError(422, {
      code: '90018',
      title: 'Call has already ended',
      detail: "This call is no longer active and can't receive commands.",
    }),
  notAnswered: () =>
    new TelnyxApiError(422, {
      code: '90034',
      title: 'Call not answered yet',
      detail: "This call can't receive this command because it has not been answered yet.",
    }),
  /**
   * 422, Telnyx's 90033 "Unable to execute command" (the description's title for a command the call's state refuses):
   * an overlay with no `overlay: false` Play Audio actively playing, which StartCallPlayback's notes rule out.
   */
  nothingToOverlay: () =>
    new TelnyxApiError(422, {
      code: '90033',
      title: 'Unable to execute command',
      detail:
        'A customer cannot Play Audio with overlay=true unless there is a Play Audio with overlay=false actively playing.',
      source: at('/overlay'),
    }),
  transcribing: () =>
    new TelnyxApiError(422, {
      code: '90054',
      title: 'Call transcription is already in progress',
      detail: 'Call transcription can not be started more than once.',
    }),
} as const;
