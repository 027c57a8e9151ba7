import { EnvelopeError, open, seal, type Envelope } from './envelope';
import type { Keyring } from './keyring';

/**
 * What a customer's sealed secret is bound to (the "v2" additional data of every sealed kind, docs/providers.md#what-a-secret-is-bound-to):
 * the row, its workspace, the provider it is for and the address it is sent to (or signs for). An envelope copied to
 * another row, or left on a row whose provider or base URL was changed in the table behind the product's back, does
 * not open: a moved base URL cannot receive the credentials. Whatever changes one of these re-seals in the same
 * transaction.
 */
export interface SecretBinding {
  /** The kind of secret (e.g. `carrier-connection`): the same ids in two tables are two bindings. */
  kind: string;
  workspaceId: string;
  id: string;
  provider: string;
  /** The base URL (or shop, or endpoint URL) as the row stores it; null: the provider's own default. */
  address: string | null;
}

/** The additional data of a binding (JSON: no value can be read as another's). */
export const boundAdditionalData = ({ kind, workspaceId, id, provider, address }: SecretBinding): string =>
  `${kind}:v2:${JSON.stringify([workspaceId, id, provider, address])}`;

/**
 * The additional data rows were sealed with before v2 (the row and its workspace only), for the kinds that had it:
 * still opened until `secrets rekey` re-seals them under their binding.
 */
export const rowOnlyAdditionalData = (kind: string, row: { workspaceId: string; id: string }): string =>
  `${kind}:v1:${row.workspaceId}:${row.id}`;

/**
 * Opens an envelope under its bound additional data, or, failing that, under the one it may have been sealed with
 * before v2 (`legacy`); the refusal of the bound one when neither opens (it names the key, never the secret).
 */
export function openBound(keyring: Keyring, envelope: Envelope, bound: string, legacy?: string): string {
  try {
    return open(keyring, envelope, bound);
  } catch (error) {
    if (legacy === undefined || !(error instanceof EnvelopeError) || error.reason !== 'not_authentic') throw error;
    try {
      return open(keyring, envelope, legacy);
    } catch {
      throw error;
    }
  }
}

/**
 * The envelope under the ring's current key and its bound additional data; null when it already is (nothing to move).
 * EnvelopeError when it opens under neither.
 */
export function resealBound(keyring: Keyring, envelope: Envelope, bound: string, legacy?: string): Envelope | null {
  if (envelope.keyId === keyring.currentKeyId) {
    try {
      open(keyring, envelope, bound);
      return null;
    } catch (error) {
      if (legacy === undefined || !(error instanceof EnvelopeError)) throw error;
    }
  }
  return seal(keyring, openBound(keyring, envelope, bound, legacy), bound);
}
