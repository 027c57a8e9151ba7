import { EgressError, type Egress } from '../http/egress';

/** A calendar answer (a free/busy list, a page of bookings) is a few KB; 1 MiB is plenty and bounds a hostile one. */
export const CALENDAR_MAX_RESPONSE_BYTES = 1024 * 1024;
/** One calendar request, the token's included: the person is waiting on the line. */
export const CALENDAR_TIMEOUT_MS = 10_000;

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * `fetch` over the egress guard (lib/http/egress.ts), for the Google client (gaxios's fetchImplementation): every
 * request of a calendar connection, the token's included, leaves through the one guard. The guard answers status and
 * text only: the text is handed back as JSON when it reads as JSON, which is all gaxios looks at.
 */
export function egressFetch(egress: Egress): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const body = init?.body;
    let text: string | undefined;
    if (typeof body === 'string') text = body;
    else if (body instanceof URLSearchParams) {
      // What fetch itself would send with a form (the token request's): the guard sends the headers as given.
      text = body.toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    } else if (body instanceof Uint8Array) text = Buffer.from(body).toString('utf8');
    else if (body !== undefined && body !== null) throw new EgressError('refused');
    const answer = await egress.request(url, {
      method: init?.method ?? 'GET',
      headers,
      ...(text !== undefined && { body: text }),
      maxResponseBytes: CALENDAR_MAX_RESPONSE_BYTES,
      timeoutMs: CALENDAR_TIMEOUT_MS,
    });
    const json = /^\s*[[{]/.test(answer.text);
    return new Response(NULL_BODY_STATUSES.has(answer.status) ? null : answer.text, {
      status: answer.status,
      headers: json ? { 'content-type': 'application/json' } : {},
    });
  };
}
