import { createHash, timingSafeEqual } from 'node:crypto';

const DIGEST_TEXT = { hex: /^[0-9a-f]+$/i, base64: /^[A-Za-z0-9+/]+={0,2}$/ } as const;

/**
 * Whether a presented digest (a webhook's signature), written in the given encoding, is the expected
 * one, compared in time that does not depend on where they differ. Anything that is not text of that
 * encoding and of the expected length is false before any comparison (its length says nothing secret).
 */
export function sameDigest(presented: string | undefined, expected: string, encoding: 'hex' | 'base64'): boolean {
  if (!presented || presented.length !== expected.length || !DIGEST_TEXT[encoding].test(presented)) return false;
  const [given, wanted] = [Buffer.from(presented, encoding), Buffer.from(expected, encoding)];
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** sameDigest of hex digests (the carrier's and WhatsApp's signatures). */
export const sameHexDigest = (presented: string | undefined, expectedHex: string): boolean =>
  sameDigest(presented, expectedHex, 'hex');

/**
 * Whether a presented secret (a verify token) equals the configured one, timing-safe whatever their
 * lengths: both are hashed first, so neither their contents nor the configured length leak.
 */
export function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
