import { describe, expect, it } from 'vitest';
import { EnvelopeError, open, reseal, seal, type Envelope } from '../../lib/secrets/envelope';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';

const k1 = newKeyringEntry('k1');
const k2 = newKeyringEntry('k2');
const ringK1 = keyringSchema.parse(k1);
const ringK2K1 = keyringSchema.parse(`${k2},${k1}`);
const ringK2 = keyringSchema.parse(k2);
const aad = 'carrier-connection:v1:workspace-a:connection-a';

function refusal(action: () => unknown): EnvelopeError {
  try {
    action();
  } catch (error) {
    if (error instanceof EnvelopeError) return error;
    throw error;
  }
  throw new Error('the envelope opened');
}

const flipped = (bytes: Uint8Array, index: number) => {
  const copy = Buffer.from(bytes);
  copy[index]! ^= 0x01;
  return copy;
};

describe('secrets at rest: AES-256-GCM envelopes (lib/secrets/)', () => {
  it('opens what it sealed, with a nonce of 96 bits of its own each time and no plaintext in the envelope', () => {
    const token = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
    const first = seal(ringK1, token, aad);
    const second = seal(ringK1, token, aad);
    expect(first.keyId).toBe('k1');
    expect(first.nonce).toHaveLength(12);
    expect(Buffer.from(first.nonce).equals(Buffer.from(second.nonce))).toBe(false);
    expect(Buffer.from(first.ciphertext).equals(Buffer.from(second.ciphertext))).toBe(false);
    // Ciphertext as long as the plaintext, then the 16-byte tag.
    expect(first.ciphertext).toHaveLength(Buffer.byteLength(token) + 16);
    expect(Buffer.from(first.ciphertext).includes(Buffer.from(token))).toBe(false);
    expect(open(ringK1, first, aad)).toBe(token);
    expect(open(ringK1, second, aad)).toBe(token);
  });

  it('refuses an envelope given other additional data (another row), tampered with, or under a key the ring lacks', () => {
    const envelope = seal(ringK1, 'secret-token-value', aad);
    expect(refusal(() => open(ringK1, envelope, 'carrier-connection:v1:workspace-b:connection-a')).reason).toBe(
      'not_authentic',
    );
    expect(refusal(() => open(ringK1, envelope, 'carrier-connection:v1:workspace-a:connection-b')).reason).toBe(
      'not_authentic',
    );
    const tampered: Envelope[] = [
      { ...envelope, ciphertext: flipped(envelope.ciphertext, 0) },
      { ...envelope, ciphertext: flipped(envelope.ciphertext, envelope.ciphertext.length - 1) },
      { ...envelope, ciphertext: Buffer.from(envelope.ciphertext).subarray(0, 10) },
      { ...envelope, nonce: flipped(envelope.nonce, 5) },
    ];
    for (const each of tampered) expect(refusal(() => open(ringK1, each, aad)).reason).toBe('not_authentic');
    // Another key under the same id is another key: the envelope does not open.
    expect(refusal(() => open(keyringSchema.parse(newKeyringEntry('k1')), envelope, aad)).reason).toBe('not_authentic');
    const unknown = refusal(() => open(ringK2, envelope, aad));
    expect(unknown.reason).toBe('unknown_key');
    expect(unknown.message).toMatch(/key "k1", which SECRETS_KEYS does not hold/);
  });

  it('rotates keys: an envelope under k1 opens once k2 is current, and reseal moves it to k2, which opens without k1', () => {
    const underK1 = seal(ringK1, 'token-under-k1', aad);
    expect(open(ringK2K1, underK1, aad)).toBe('token-under-k1');
    expect(seal(ringK2K1, 'new', aad).keyId).toBe('k2');
    const moved = reseal(ringK2K1, underK1, aad);
    expect(moved.keyId).toBe('k2');
    expect(open(ringK2, moved, aad)).toBe('token-under-k1');
    expect(reseal(ringK2K1, moved, aad)).toBe(moved);
    expect(refusal(() => reseal(ringK2K1, underK1, 'other-row')).reason).toBe('not_authentic');
  });
});
