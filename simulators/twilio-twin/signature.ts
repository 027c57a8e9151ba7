import { createHmac } from 'node:crypto';

/** The header Twilio signs its webhooks with, and the twin too. */
export const TWILIO_SIGNATURE_HEADER = 'X-Twilio-Signature';

/**
 * X-Twilio-Signature as Twilio computes it (https://www.twilio.com/docs/usage/security#validating-requests): base64 of
 * the HMAC-SHA1, keyed with the account's auth token, of the full URL the request goes to followed by every POST
 * parameter sorted by name, each name immediately followed by its value. A GET carries its parameters in the URL and
 * signs the URL alone (params empty).
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string> = {}): string {
  const data = Object.keys(params)
    .sort()
    .reduce((signed, name) => signed + name + params[name], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}
