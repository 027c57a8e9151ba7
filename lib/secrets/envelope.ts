import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring } from './keyring';

/**
 * A secret sealed at rest: AES-256-GCM under the key `keyId` of the ring, a random 96-bit nonce of its
 * own, the 16-byte tag after the ciphertext. The additional data it was sealed with is not stored: the
 * caller gives it again (the row it belongs to), so an envelope copied to another row does not open.
 */
export interface Envelope {
  keyId: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

export const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Why an envelope did not open: its key is not in the ring (retired before `carrier rekey` moved it), or it
 * fails authentication (tampered, truncated, or given other additional data: another row's).
 */
export class EnvelopeError extends Error {
  constructor(
    readonly reason: 'unknown_key' | 'not_authentic',
    readonly keyId: string,
  ) {
    super(
      reason === 'unknown_key'
        ? `the secret is sealed under key "${keyId}", which SECRETS_KEYS does not hold`
        : `the secret sealed under key "${keyId}" fails authentication (tampered, or not this row's: sealed for another row, workspace, provider or base URL)`,
    );
  }
}

/** Seals `plaintext` under the ring's current key, bound to `additionalData`. */
export function seal(keyring: Keyring, plaintext: string, additionalData: string): Envelope {
  return sealBytes(keyring, Buffer.from(plaintext, 'utf8'), Buffer.from(additionalData, 'utf8'));
}

/** The plaintext of an envelope sealed with `additionalData`; EnvelopeError when it does not open. */
export function open(keyring: Keyring, envelope: Envelope, additionalData: string): string {
  return openBytes(keyring, envelope, Buffer.from(additionalData, 'utf8')).toString('utf8');
}

/** seal over bytes: the Temporal payload codec (lib/temporal/payload-codec.ts) seals serialized payloads. */
export function sealBytes(keyring: Keyring, plaintext: Uint8Array, additionalData: Uint8Array): Envelope {
  const keyId = keyring.currentKeyId;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.keys.get(keyId)!, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { keyId, nonce, ciphertext };
}

/** open over bytes; EnvelopeError when the key is not in the ring or the envelope fails authentication. */
export function openBytes(keyring: Keyring, envelope: Envelope, additionalData: Uint8Array): Buffer {
  const key = keyring.keys.get(envelope.keyId);
  if (!key) throw new EnvelopeError('unknown_key', envelope.keyId);
  const sealed = Buffer.from(
    envelope.ciphertext.buffer,
    envelope.ciphertext.byteOffset,
    envelope.ciphertext.byteLength,
  );
  if (envelope.nonce.length !== NONCE_BYTES || sealed.length < TAG_BYTES)
    throw new EnvelopeError('not_authentic', envelope.keyId);
  const decipher = createDecipheriv('aes-256-gcm', key, envelope.nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(additionalData);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new EnvelopeError('not_authentic', envelope.keyId);
  }
}
