import { describe, expect, it } from 'vitest';
import { boundAdditionalData, openBound, resealBound, rowOnlyAdditionalData } from '../../lib/secrets/binding';
import { EnvelopeError, open, seal, type Envelope } from '../../lib/secrets/envelope';
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
    const moved = resealBound(ringK2K1, underK1, aad)!;
    expect(moved.keyId).toBe('k2');
    expect(open(ringK2, moved, aad)).toBe('token-under-k1');
    expect(resealBound(ringK2K1, moved, aad)).toBeNull();
    expect(refusal(() => resealBound(ringK2K1, underK1, 'other-row')).reason).toBe('not_authentic');
  });

  describe('the binding (row, workspace, provider, base URL)', () => {
    const row = { kind: 'carrier-connection', workspaceId: 'workspace-a', id: 'connection-a' };
    const bound = { ...row, provider: 'twilio-twin', address: 'http://127.0.0.1:4010' };
    const SECRET = 'secret-that-must-never-be-shown';

    it('opens only under the same provider and address: a moved base URL, or provider, does not open, the secret unnamed', () => {
      const envelope = seal(ringK1, SECRET, boundAdditionalData(bound));
      expect(openBound(ringK1, envelope, boundAdditionalData(bound))).toBe(SECRET);
      for (const moved of [
        { ...bound, address: 'http://169.254.169.254' },
        { ...bound, address: null },
        { ...bound, provider: 'twilio' },
        { ...bound, workspaceId: 'workspace-b' },
        // JSON: a value cannot spill into its neighbour.
        { ...bound, provider: 'twilio-twin","http://127.0.0.1:4010', address: '' },
      ]) {
        const error = refusal(() =>
          openBound(ringK1, envelope, boundAdditionalData(moved), rowOnlyAdditionalData(row.kind, row)),
        );
        expect(error.reason).toBe('not_authentic');
        expect(error.message).toMatch(/fails authentication .*provider or base URL/);
        expect(error.message).not.toContain(SECRET);
      }
    });

    it('opens an envelope sealed before the binding under its row-only data, and resealBound moves it to the binding', () => {
      const legacy = rowOnlyAdditionalData(row.kind, row);
      expect(legacy).toBe(aad);
      const old = seal(ringK1, SECRET, legacy);
      expect(refusal(() => openBound(ringK1, old, boundAdditionalData(bound))).reason).toBe('not_authentic');
      expect(openBound(ringK1, old, boundAdditionalData(bound), legacy)).toBe(SECRET);
      // Under the current key already: moved all the same, since it is not under its binding.
      const moved = resealBound(ringK1, old, boundAdditionalData(bound), legacy)!;
      expect(open(ringK1, moved, boundAdditionalData(bound))).toBe(SECRET);
      expect(refusal(() => open(ringK1, moved, legacy)).reason).toBe('not_authentic');
      expect(resealBound(ringK1, moved, boundAdditionalData(bound), legacy)).toBeNull();
    });
  });
});
