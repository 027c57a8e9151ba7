import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  KEY_ID_METADATA,
  PayloadDecodeError,
  temporalDataConverter,
} from '../../lib/temporal/payload-codec';

const old = newKeyringEntry('old');
const fresh = newKeyringEntry('fresh');
const ringOld = keyringSchema.parse(old);
const ringRotated = keyringSchema.parse(`${fresh},${old}`);
const ringFreshOnly = keyringSchema.parse(fresh);

const lead = { phone: '+14155550123', name: 'Ada Lovelace', fields: { notes: 'x'.repeat(64) } };
const payload = defaultPayloadConverter.toPayload(lead);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

async function decodeError(codec: EncryptionCodec, sealed: ReturnType<EncryptionCodec['encodeOne']>) {
  const failure = await codec.decode([sealed]).then(
    () => null,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(PayloadDecodeError);
  return (failure as PayloadDecodeError).message;
}

describe('the Temporal payload codec (lib/temporal/payload-codec.ts)', () => {
  it('seals a payload whole under the current key and opens it to the same payload', async () => {
    const codec = new EncryptionCodec(ringOld);
    const [sealed] = await codec.encode([payload]);
    expect(text(sealed!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed!.metadata![KEY_ID_METADATA])).toBe('old');
    expect(Object.keys(sealed!.metadata!).sort()).toEqual(['encoding', KEY_ID_METADATA]);
    // Neither the data nor the inner metadata (json/plain) shows through.
    expect(text(sealed!.data)).not.toContain('4155550123');
    expect(text(sealed!.data)).not.toContain('Lovelace');
    expect(text(sealed!.data)).not.toContain('json/plain');
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(lead);
    expect(text(opened!.metadata!.encoding)).toBe('json/plain');
  });

  it('uses a random 12-byte IV: the same payload seals to different bytes each time', async () => {
    const codec = new EncryptionCodec(ringOld);
    const [first, second] = await codec.encode([payload, payload]);
    expect(Buffer.from(first!.data!).equals(Buffer.from(second!.data!))).toBe(false);
    expect(Buffer.from(first!.data!).subarray(0, 12).equals(Buffer.from(second!.data!).subarray(0, 12))).toBe(false);
  });

  it('after rotation seals under the new key and still opens what the old key sealed', async () => {
    const [sealedOld] = await new EncryptionCodec(ringOld).encode([payload]);
    const rotated = new EncryptionCodec(ringRotated);
    const [sealedNew] = await rotated.encode([payload]);
    expect(text(sealedNew!.metadata![KEY_ID_METADATA])).toBe('fresh');
    const [openedOld, openedNew] = await rotated.decode([sealedOld!, sealedNew!]);
    expect(defaultPayloadConverter.fromPayload(openedOld!)).toEqual(lead);
    expect(defaultPayloadConverter.fromPayload(openedNew!)).toEqual(lead);
    // Once the old key leaves the ring, what it sealed no longer opens, naming the key.
    expect(await decodeError(new EncryptionCodec(ringFreshOnly), sealedOld!)).toContain('"old"');
  });

  it('decodes a payload without the encrypted encoding as itself (histories from before the codec)', async () => {
    const codec = new EncryptionCodec(ringOld);
    const binaryNull = defaultPayloadConverter.toPayload(undefined);
    const [plain, none] = await codec.decode([payload, binaryNull]);
    expect(plain).toBe(payload);
    expect(none).toBe(binaryNull);
  });

  it('refuses a tampered ciphertext, IV, key id or a truncated payload', async () => {
    const codec = new EncryptionCodec(ringRotated);
    const [sealed] = await codec.encode([payload]);
    const data = Buffer.from(sealed!.data!);
    const flip = (index: number) => {
      const copy = Buffer.from(data);
      copy[index]! ^= 0x01;
      return { ...sealed!, data: copy };
    };
    expect(await decodeError(codec, flip(data.length - 20))).toContain('fails authentication');
    expect(await decodeError(codec, flip(0))).toContain('fails authentication');
    expect(await decodeError(codec, flip(data.length - 1))).toContain('fails authentication');
    const otherKey = { ...sealed!, metadata: { ...sealed!.metadata, [KEY_ID_METADATA]: Buffer.from('old') } };
    expect(await decodeError(codec, otherKey)).toContain('fails authentication');
    expect(await decodeError(codec, { ...sealed!, data: data.subarray(0, 11) })).toContain('truncated');
    expect(await decodeError(codec, { ...sealed!, data: data.subarray(0, 20) })).toContain('fails authentication');
  });

  it('with sealing off (TEMPORAL_PAYLOAD_ENCRYPTION=false) writes plain payloads and still opens sealed ones', async () => {
    const [sealed] = await new EncryptionCodec(ringOld).encode([payload]);
    const decodeOnly = new EncryptionCodec(ringOld, { seal: false });
    expect(await decodeOnly.encode([payload])).toEqual([payload]);
    const [opened] = await decodeOnly.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(lead);
  });

  it('is off, payloads in plain text, only without a key ring', () => {
    expect(temporalDataConverter(undefined)).toEqual({});
    expect(temporalDataConverter(ringOld).payloadCodecs).toEqual([expect.any(EncryptionCodec)]);
  });
});
