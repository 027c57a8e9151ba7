import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether a presented hex digest (a webhook's signature) is the expected one, compared in time that
 * does not depend on where they differ. Anything that is not hex of the expected length is false
 * before any comparison (its length says nothing secret).
 */
export function sameHexDigest(presented: string | undefined, expectedHex: string): boolean {
  if (!presented || presented.length !== expectedHex.length || !/^[0-9a-f]+$/i.test(presented)) return false;
  return timingSafeEqual(Buffer.from(presented, 'hex'), Buffer.from(expectedHex, 'hex'));
}

/**
 * Whether a presented secret (a verify token) equals the configured one, timing-safe whatever their
 * lengths: both are hashed first, so neither their contents nor the configured length leak.
 */
export function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
