import { ConflictError } from '../operator-refusals';
import { boundAdditionalData } from '../secrets/binding';
import { open, seal } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import { clearSecretRowKind, envelopeColumns, envelopeFromColumns, type EnvelopeColumns } from '../secrets/sealed-rows';

/*
 * A result webhook endpoint's signing secret (docs/features/result-webhooks.md), sealed with the key ring like every
 * connection's secret: never kept in clear, opened only to sign an attempt, never logged or answered after the one time
 * `webhook create` prints it.
 */

export interface EndpointSecretRow extends EnvelopeColumns {
  id: string;
  workspaceId: string;
  url: string;
  /** Only an endpoint made before secrets were sealed, until `secrets rekey` seals it. */
  secret: string | null;
}

/**
 * What the envelope is bound to: the endpoint, its workspace, what it is and the address it signs for. An envelope
 * copied to another endpoint, or to one whose URL was changed in the table, does not open.
 */
export const endpointSecretAdditionalData = (row: { workspaceId: string; id: string; url: string }) =>
  boundAdditionalData({
    kind: 'result-webhook-endpoint',
    workspaceId: row.workspaceId,
    id: row.id,
    provider: 'result-webhook',
    address: row.url,
  });

export const sealEndpointSecret = (
  keyring: Keyring,
  row: { workspaceId: string; id: string; url: string },
  secret: string,
): EnvelopeColumns => envelopeColumns(seal(keyring, secret, endpointSecretAdditionalData(row)));

/**
 * The endpoint's secret in clear, to sign with: opened from its envelope (SECRETS_KEYS must be set), or, for an endpoint
 * made before secrets were sealed and not yet moved by `secrets rekey`, as it was kept.
 */
export function openEndpointSecret(keyring: Keyring | undefined, row: EndpointSecretRow): string {
  const envelope = envelopeFromColumns(row);
  if (!envelope) {
    if (row.secret !== null) return row.secret;
    throw new ConflictError(`result webhook endpoint ${row.id} holds no secret`);
  }
  if (!keyring)
    throw new ConflictError(
      'config: SECRETS_KEYS is required but not set (result webhook secrets are sealed with it; docs/providers.md)',
    );
  return open(keyring, envelope, endpointSecretAdditionalData(row));
}

/** The columns openEndpointSecret reads. */
export const ENDPOINT_SECRET_COLUMNS = {
  id: true,
  workspaceId: true,
  url: true,
  secret: true,
  secretKeyId: true,
  secretNonce: true,
  secretCiphertext: true,
} as const;

/** `secrets rekey`: endpoints' secrets sealed (those still in clear) and moved to the ring's current key. */
export const resultWebhookEndpointRows = clearSecretRowKind<EndpointSecretRow>({
  table: 'ResultWebhookEndpoint',
  columns: { keyId: 'secretKeyId', nonce: 'secretNonce', ciphertext: 'secretCiphertext', clear: 'secret' },
  bindingColumns: ['url'],
  additionalDataOf: endpointSecretAdditionalData,
});
