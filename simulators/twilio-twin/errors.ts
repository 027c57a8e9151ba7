/**
 * Twilio's REST error body, `{ code, message, more_info, status }`: the one error shape Twilio's description of the
 * 2010-04-01 API publishes (the 408 of UpdateCallRecording), and what every Twilio error answers.
 */
export interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

export class TwilioRestError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }

  get body(): TwilioErrorBody {
    return {
      code: this.code,
      message: this.message,
      more_info: `https://www.twilio.com/docs/errors/${this.code}`,
      status: this.status,
    };
  }
}

/** The codes the twin answers, as Twilio's error dictionary names them (https://www.twilio.com/docs/api/errors). */
export const TWILIO_ERRORS = {
  /** 401: no credentials, wrong ones, or credentials of another account than the path's. */
  authenticate: () => new TwilioRestError(401, 20003, 'Authenticate'),
  notFound: (path: string) => new TwilioRestError(404, 20404, `The requested resource ${path} was not found`),
  /** Twilio's generic 400 (error 20001), for a parameter the dictionary has no code of its own for. */
  badRequest: (message: string) => new TwilioRestError(400, 20001, message),
  noTo: () => new TwilioRestError(400, 21201, "No 'To' number is specified"),
  invalidTo: (to: string) => new TwilioRestError(400, 21211, `Invalid 'To' Phone Number: ${to}`),
  invalidFrom: (from: string) => new TwilioRestError(400, 21212, `Invalid 'From' Phone Number: ${from}`),
  noFrom: () => new TwilioRestError(400, 21213, "No 'From' number is specified"),
  /** A From that is none of the account's Twilio numbers or verified caller ids ("'From' phone number not verified"). */
  fromNotVerified: (from: string) =>
    new TwilioRestError(
      400,
      21210,
      `The source phone number provided, ${from}, is not yet verified for your account. You may only make calls from phone numbers that you've verified or purchased from Twilio.`,
    ),
  /** A To in a country the account's Voice Geographic Permissions do not enable, in Twilio's words. */
  geoPermission: (to: string) =>
    new TwilioRestError(
      400,
      21215,
      `Account not authorized to call ${to}. Perhaps you need to enable some international permissions: https://www.twilio.com/console/voice/calls/geo-permissions/low-risk`,
    ),
  invalidUrl: (url: string) => new TwilioRestError(400, 21205, `Url is not a valid URL: ${url}`),
  noUrl: () => new TwilioRestError(400, 21205, "Either a 'Url', 'ApplicationSid' or 'Twiml' parameter is required"),
  invalidStatusCallback: (url: string) => new TwilioRestError(400, 21609, `Invalid 'StatusCallback': ${url}`),
  invalidStatusCallbackEvent: (event: string) =>
    new TwilioRestError(400, 21626, `Invalid 'StatusCallbackEvent': ${event}`),
  notInProgress: () => new TwilioRestError(400, 21220, 'Call is not in-progress. Cannot redirect.'),
} as const;
