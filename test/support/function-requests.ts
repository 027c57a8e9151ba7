import { createHmac, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';

/**
 * What a customer's endpoint does, written from docs/features/functions.md#verifying-a-request: the signed content is
 * `<webhook-id>.<webhook-timestamp>.<raw body>`, HMAC-SHA256 keyed with the base64 after `whsec_`; the request is
 * genuine when any `v1,` signature of the header matches and the timestamp is within five minutes.
 */
export function verifyFunctionRequest(secret: string, headers: http.IncomingHttpHeaders, rawBody: string): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.split('_')[1]!, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  return String(headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, signature] = entry.split(',');
      const given = Buffer.from(signature ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}
