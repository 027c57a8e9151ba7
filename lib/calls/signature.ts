import { createHmac } from 'node:crypto';
import { sameHexDigest } from '../timing-safe';

/**
 * The signature of a carrier's status event, modelled on Stripe's and Standard Webhooks':
 * header `Telephony-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the
 * provider's secret. Several v1 values may be listed (a secret being rotated); one must match. An event
 * signed more than SIGNATURE_TOLERANCE_SECONDS away from the receiver's clock is refused, so a captured
 * event cannot be replayed later. The simulated carrier signs with its own copy of this scheme
 * (simulators/simulated-carrier/protocol.ts), on purpose: a stranger that reads the same page.
 */
export const SIGNATURE_HEADER = 'telephony-signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function signEvent(secret: string, rawBody: string | Buffer, nowMs = Date.now()): string {
  const timestamp = Math.floor(nowMs / 1000);
  return `t=${timestamp},v1=${digest(secret, timestamp, rawBody)}`;
}

/** Whether the header signs this very body with the secret, within the tolerance of now. */
export function verifyEventSignature(
  secret: string,
  rawBody: Buffer,
  header: string | undefined,
  nowMs = Date.now(),
): boolean {
  if (!header) return false;
  const parts = header.split(',').map((part) => part.trim().split('='));
  const timestamp = Number(parts.find(([name]) => name === 't')?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(nowMs / 1000 - timestamp) > SIGNATURE_TOLERANCE_SECONDS) return false;
  const expected = digest(secret, timestamp, rawBody);
  return parts.some(([name, value]) => name === 'v1' && sameHexDigest(value, expected));
}

function digest(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}
