import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import protos from '@temporalio/proto';
import { EnvelopeError, NONCE_BYTES, openBytes, sealBytes } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';

/**
 * The Temporal payload codec (docs/temporal-ui.md#encrypted-payloads): every payload a client or worker hands the
 * server (workflow and activity inputs and results, signals, queries, memos, failures' details) is sealed whole,
 * metadata and data, with AES-256-GCM under the current key of SECRETS_KEYS, so histories hold no lead's phone,
 * webhook header or model answer in plain text. It runs outside the workflow sandbox (the SDK applies
 * payloadCodecs on the worker's and client's side of the bridge), so the workflows' determinism is untouched.
 */
// A CommonJS module whose names Node's ESM loader cannot see: read from its default export.
const { Payload: PayloadMessage } = protos.temporal.api.common.v1;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

// Bound into every payload's tag: a carrier secret's envelope (sealed under the same ring) never opens as a payload.
const PAYLOAD_ADDITIONAL_DATA = Buffer.from('temporal-payload', 'utf8');
const ENCRYPTED_ENCODING_BYTES = Buffer.from(ENCRYPTED_ENCODING, 'utf8');

/** Why a payload did not decode: it names the key id, never key or plaintext (the message reaches logs and the UI). */
export class PayloadDecodeError extends Error {}

export class EncryptionCodec implements PayloadCodec {
  /** `seal: false` (TEMPORAL_PAYLOAD_ENCRYPTION=false): encode leaves payloads as they are, decode still opens. */
  constructor(
    private readonly keyring: Keyring,
    private readonly options: { seal: boolean } = { seal: true },
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return this.options.seal ? payloads.map((payload) => this.encodeOne(payload)) : payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decodeOne(payload));
  }

  encodeOne(payload: Payload): Payload {
    const plaintext = PayloadMessage.encode(payload).finish();
    const envelope = sealBytes(this.keyring, plaintext, PAYLOAD_ADDITIONAL_DATA);
    return {
      metadata: {
        encoding: ENCRYPTED_ENCODING_BYTES,
        [KEY_ID_METADATA]: Buffer.from(envelope.keyId, 'utf8'),
      },
      data: Buffer.concat([envelope.nonce, envelope.ciphertext]),
    };
  }

  /** A payload not sealed by this codec (histories written before it, search attributes) decodes as itself. */
  decodeOne(payload: Payload): Payload {
    if (!isEncrypted(payload)) return payload;
    const keyId = Buffer.from(payload.metadata?.[KEY_ID_METADATA] ?? new Uint8Array()).toString('utf8');
    const data = payload.data ?? new Uint8Array();
    if (data.length < NONCE_BYTES) throw new PayloadDecodeError(`encrypted payload under key "${keyId}" is truncated`);
    try {
      const plaintext = openBytes(
        this.keyring,
        { keyId, nonce: data.subarray(0, NONCE_BYTES), ciphertext: data.subarray(NONCE_BYTES) },
        PAYLOAD_ADDITIONAL_DATA,
      );
      return PayloadMessage.decode(plaintext);
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
      throw new PayloadDecodeError(
        error.reason === 'unknown_key'
          ? `payload sealed under key "${keyId}", which SECRETS_KEYS does not hold`
          : `payload sealed under key "${keyId}" fails authentication (tampered or truncated)`,
      );
    }
  }
}

export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return encoding !== undefined && encoding !== null && ENCRYPTED_ENCODING_BYTES.equals(Buffer.from(encoding));
}

/**
 * The data converter every Client and Worker of this product is built with: the codec under the key ring, or, with no
 * ring (SECRETS_KEYS unset: a deployment that seals nothing), the SDK's default, payloads in plain text.
 */
export function temporalDataConverter(keyring: Keyring | undefined, { seal = true } = {}): DataConverter {
  return keyring ? { payloadCodecs: [new EncryptionCodec(keyring, { seal })] } : {};
}
