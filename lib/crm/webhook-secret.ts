import { boundAdditionalData } from '../secrets/binding';
import { open, seal, type Envelope } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import { clearSecretRowKind, envelopeColumns, envelopeFromColumns, type EnvelopeColumns } from '../secrets/sealed-rows';

/*
 * A store connection's webhook signing secret (docs/features/commerce.md#connections-and-the-stores-webhooks): it must
 * be kept to verify every delivery's HMAC, so it is sealed with the key ring in the connection's webhookSecret* columns
 * (the secret* ones hold the Admin API token: admin-token.ts), opened only to check a signature, never shown after
 * `crm connect` prints nothing of it, never logged.
 */

/** The webhookSecret* columns, named as every sealed row's (sealed-rows.ts). */
export interface WebhookSecretRow extends EnvelopeColumns {
  id: string;
  workspaceId: string;
  kind: string;
  shopDomain: string;
  /** Only a connection made before secrets were sealed, until `secrets rekey` seals it. */
  secret: string | null;
}

/**
 * What the envelope is bound to: the connection, its workspace, its provider and the shop it receives for. An envelope
 * copied to another connection, or to one whose shop was changed in the table, does not open.
 */
export const webhookSecretAdditionalData = (row: {
  workspaceId: string;
  id: string;
  kind: string;
  shopDomain: string;
}) =>
  boundAdditionalData({
    kind: 'crm-connection-webhook-secret',
    workspaceId: row.workspaceId,
    id: row.id,
    provider: row.kind,
    address: row.shopDomain,
  });

/** An envelope as the webhookSecret* columns hold it. */
function webhookSecretColumns(envelope: Envelope) {
  const { secretKeyId, secretNonce, secretCiphertext } = envelopeColumns(envelope);
  return {
    webhookSecretKeyId: secretKeyId,
    webhookSecretNonce: secretNonce,
    webhookSecretCiphertext: secretCiphertext,
  };
}

export const sealWebhookSecret = (
  keyring: Keyring,
  row: { workspaceId: string; id: string; kind: string; shopDomain: string },
  secret: string,
) => webhookSecretColumns(seal(keyring, secret, webhookSecretAdditionalData(row)));

/** What a removed connection keeps of its webhook secret: nothing, sealed or clear. */
export const WIPED_WEBHOOK_SECRET = {
  secret: null,
  webhookSecretKeyId: null,
  webhookSecretNonce: null,
  webhookSecretCiphertext: null,
} as const;

/** The columns webhookSecretOf reads (prisma select). */
export const WEBHOOK_SECRET_COLUMNS = {
  id: true,
  workspaceId: true,
  kind: true,
  shopDomain: true,
  secret: true,
  webhookSecretKeyId: true,
  webhookSecretNonce: true,
  webhookSecretCiphertext: true,
} as const;

interface StoredWebhookSecret {
  id: string;
  workspaceId: string;
  kind: string;
  shopDomain: string;
  secret: string | null;
  webhookSecretKeyId: string | null;
  webhookSecretNonce: string | null;
  webhookSecretCiphertext: string | null;
}

/**
 * The connection's signing secret in clear, to verify one delivery: opened from its envelope, or as kept by a connection
 * made before secrets were sealed (until `secrets rekey` seals it). Null when it cannot be had: no key ring, or an
 * envelope that does not open (every delivery is then refused 401, nothing written).
 */
export function webhookSecretOf(keyring: Keyring | undefined, row: StoredWebhookSecret): string | null {
  const envelope = envelopeFromColumns({
    secretKeyId: row.webhookSecretKeyId,
    secretNonce: row.webhookSecretNonce,
    secretCiphertext: row.webhookSecretCiphertext,
  });
  if (!envelope) return row.secret;
  if (!keyring) return null;
  try {
    return open(keyring, envelope, webhookSecretAdditionalData(row));
  } catch {
    return null;
  }
}

/** `secrets rekey`: the connections' webhook secrets sealed (those still in clear) and moved to the ring's current key. */
export const crmWebhookSecretRows = clearSecretRowKind<WebhookSecretRow>({
  table: 'CrmConnection',
  columns: {
    keyId: 'webhookSecretKeyId',
    nonce: 'webhookSecretNonce',
    ciphertext: 'webhookSecretCiphertext',
    clear: 'secret',
  },
  bindingColumns: ['kind', 'shopDomain'],
  additionalDataOf: webhookSecretAdditionalData,
});
