/**
 * Cal.com API v2's error envelope, as its HttpExceptionFilter writes it (apps/api/v2/src/filters/
 * http-exception.filter.ts of calcom/cal.com): `{ status: 'error', timestamp, path, error: { code, message } }`, the
 * code being the NestJS exception's name.
 */
export class CalcomError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  body(path: string) {
    return {
      status: 'error',
      timestamp: new Date().toISOString(),
      path,
      error: { code: this.code, message: this.message },
    };
  }

  static badRequest = (message: string) => new CalcomError(400, 'BadRequestException', message);
  static unauthorized = (message: string) => new CalcomError(401, 'UnauthorizedException', message);
  static notFound = (message: string) => new CalcomError(404, 'NotFoundException', message);
  /** Cal.com's HttpError 410 of an unknown or lapsed reservation uid given with a booking. */
  static gone = (message: string) => new CalcomError(410, 'GoneException', message);
  static unprocessable = (message: string) => new CalcomError(422, 'UnprocessableEntityException', message);
}
