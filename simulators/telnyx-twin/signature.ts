import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

/** The headers Telnyx signs its webhooks with (API v2), and the twin too. */
export const TELNYX_SIGNATURE_HEADER = 'telnyx-signature-ed25519';
export const TELNYX_TIMESTAMP_HEADER = 'telnyx-timestamp';

/** An Ed25519 private key from its 32-byte seed in base64 (an account's signingKey: config.ts's DEVELOPMENT_TELNYX_ACCOUNT). */
export function signingKey(seedBase64: string): KeyObject {
  const seed = Buffer.from(seedBase64, 'base64');
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  // PKCS#8 of an Ed25519 key: a fixed 16-byte prefix, then the seed.
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** The public key of a signing key as Telnyx's portal shows one: base64 of its 32 raw bytes. */
export const publicKeyBase64 = (key: KeyObject) =>
  Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x!, 'base64url').toString('base64');

/**
 * A webhook's signature headers as Telnyx makes them: `telnyx-timestamp` (Unix seconds) and
 * `telnyx-signature-ed25519`, the base64 Ed25519 signature of `${timestamp}|${body}`, the body's exact bytes.
 */
export function telnyxSignatureHeaders(key: KeyObject, body: string, timestamp = Math.floor(Date.now() / 1_000)) {
  return {
    [TELNYX_TIMESTAMP_HEADER]: String(timestamp),
    [TELNYX_SIGNATURE_HEADER]: sign(null, Buffer.from(`${timestamp}|${body}`, 'utf8'), key).toString('base64'),
  };
}
