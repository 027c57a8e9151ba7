import { z } from 'zod';
import { atLeastCodePoints, atMostCodePoints } from '../code-point-length';
import type { Database } from '../database';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { boundAdditionalData, rowOnlyAdditionalData } from '../secrets/binding';
import { seal } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import {
  envelopeColumns,
  envelopeFromColumns,
  openSealedRow,
  rekeyRows,
  type EnvelopeColumns,
  type RekeyReport,
  type SealedRowKind,
} from '../secrets/sealed-rows';
import { isUuid } from '../uuid';

/*
 * A store connection's Admin API access token (docs/features/crm.md#importing-through-the-admin-api): sealed with the
 * key ring in the connection's secret columns, bound to the row, never shown or logged. With one, a CRM import reads
 * the store's customers through the Admin GraphQL API; without, it reads the orders that arrived by webhook.
 */

/** shopify: the store itself (https://{shopDomain}); shopify-twin: the store twin at the connection's adminBaseUrl. */
export const CRM_ADMIN_PROVIDERS = ['shopify', 'shopify-twin'] as const;
export type CrmAdminProvider = (typeof CRM_ADMIN_PROVIDERS)[number];

/** An Admin API access token as Shopify issues them (shpat_..., shpca_..., ...): printable, no whitespace. */
export const adminTokenSchema = z
  .string()
  .check(atLeastCodePoints(8, 'must be an Admin API access token'), atMostCodePoints(500))
  .regex(/^[\x21-\x7e]+$/, 'must be an Admin API access token (printable characters, no spaces)');

export const adminBaseUrlSchema = z
  .string()
  .url()
  .refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL');

interface AdminTokenRow extends EnvelopeColumns {
  id: string;
  workspaceId: string;
  shopDomain: string;
  adminProvider: string | null;
  adminBaseUrl: string | null;
  adminTokenSetAt: Date | null;
}

type Bound = {
  workspaceId: string;
  id: string;
  shopDomain: string;
  adminProvider: string | null;
  adminBaseUrl: string | null;
};

/**
 * What the envelope is bound to (lib/secrets/binding.ts): the connection, its workspace, its provider and where the
 * token is sent (the twin's base URL, or the store itself). A token copied to another connection, or left on one whose
 * provider, base URL or shop was changed in the table, does not open; `crm admin-token`, which sets them, seals anew.
 */
const additionalDataOf = (row: Bound) =>
  boundAdditionalData({
    kind: 'crm-connection-admin-token',
    workspaceId: row.workspaceId,
    id: row.id,
    provider: row.adminProvider ?? 'shopify',
    address: row.adminBaseUrl ?? `https://${row.shopDomain}`,
  });
/** What tokens were sealed with before their binding (until `secrets rekey` moves them). */
const legacyAdditionalDataOf = (row: { workspaceId: string; id: string }) =>
  rowOnlyAdditionalData('crm-connection-admin-token', row);

async function lockLive(tx: Parameters<SealedRowKind<AdminTokenRow>['lockLive']>[0], id: string) {
  if (!isUuid(id)) return null;
  const rows = await tx.$queryRaw<AdminTokenRow[]>`
    SELECT id, "workspaceId", "shopDomain", "adminProvider", "adminBaseUrl", "adminTokenSetAt",
           "secretKeyId", "secretNonce", "secretCiphertext"
      FROM "CrmConnection" WHERE id = ${id}::uuid AND "deletedAt" IS NULL FOR UPDATE`;
  return rows[0] ?? null;
}

export interface AdminTokenRequest {
  connectionId: string;
  token: string;
  provider: CrmAdminProvider;
  /** shopify-twin only. */
  baseUrl?: string;
}

/** `crm admin-token`: sets (or rotates) a live connection's token, sealed afresh under the ring's current key. */
export async function setCrmAdminToken(db: Database, keyring: Keyring, request: AdminTokenRequest) {
  if ((request.provider === 'shopify-twin') !== (request.baseUrl !== undefined))
    throw new ConflictError('a shopify-twin token needs the base URL of its twin, a shopify token none');
  return db.$transaction(async (tx) => {
    const row = await lockLive(tx, request.connectionId);
    if (!row) throw new NotFoundError(`no live CRM connection has id ${request.connectionId}`);
    const adminBaseUrl = request.baseUrl ?? null;
    // Sealed for the provider and URL it is set with, not those the row held.
    const envelope = seal(
      keyring,
      request.token,
      additionalDataOf({ ...row, adminProvider: request.provider, adminBaseUrl }),
    );
    const adminTokenSetAt = new Date();
    const rotated = row.secretKeyId !== null;
    await tx.crmConnection.update({
      where: { id: row.id },
      data: {
        ...envelopeColumns(envelope),
        adminProvider: request.provider,
        adminBaseUrl,
        adminTokenSetAt,
      },
    });
    return {
      id: row.id,
      provider: request.provider,
      keyId: envelope.keyId,
      rotated,
      setAt: adminTokenSetAt.toISOString(),
    };
  });
}

/** `crm list`: the workspace's live connections, whether each holds a token and under which key; never the token. */
export async function listCrmConnectionsForOperator(db: Database, workspaceId: string) {
  const rows = await db.crmConnection.findMany({
    where: { workspaceId, deletedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    select: {
      id: true,
      kind: true,
      shopDomain: true,
      createdAt: true,
      adminProvider: true,
      adminBaseUrl: true,
      adminTokenSetAt: true,
      secretKeyId: true,
    },
  });
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    shopDomain: row.shopDomain,
    createdAt: row.createdAt.toISOString(),
    adminToken: row.secretKeyId !== null,
    adminProvider: row.adminProvider,
    adminBaseUrl: row.adminBaseUrl,
    adminTokenKeyId: row.secretKeyId,
    adminTokenSetAt: row.adminTokenSetAt?.toISOString() ?? null,
  }));
}

/** What an import needs of a connection with a token: where to send requests and the token in clear. */
export interface OpenedAdminConnection {
  connectionId: string;
  shopDomain: string;
  provider: CrmAdminProvider;
  baseUrl: string | null;
  accessToken: string;
}

/** The connection's Admin API access, opened; null when the connection holds no token (or is gone). */
export async function openCrmAdminConnection(
  db: Database,
  keyring: Keyring | undefined,
  connectionId: string,
): Promise<OpenedAdminConnection | null> {
  const row = await db.crmConnection.findFirst({
    where: { id: connectionId, deletedAt: null },
    select: {
      id: true,
      workspaceId: true,
      shopDomain: true,
      adminProvider: true,
      adminBaseUrl: true,
      secretKeyId: true,
      secretNonce: true,
      secretCiphertext: true,
    },
  });
  const envelope = row && envelopeFromColumns(row);
  if (!row || !envelope) return null;
  if (!keyring)
    throw new ConflictError(
      'config: SECRETS_KEYS is required but not set (store Admin API tokens are sealed with it; docs/features/crm.md)',
    );
  return {
    connectionId: row.id,
    shopDomain: row.shopDomain,
    provider: (row.adminProvider ?? 'shopify') as CrmAdminProvider,
    baseUrl: row.adminBaseUrl,
    accessToken: openSealedRow(keyring, crmAdminTokenRows, { ...row, adminTokenSetAt: null }, envelope),
  };
}

/** `crm rekey` (and the combined `secrets rekey`): the connections' tokens moved to the ring's current key. */
export const crmAdminTokenRows: SealedRowKind<AdminTokenRow> = {
  async idsNotUnder(db, keyId) {
    const rows = await db.crmConnection.findMany({
      where: { deletedAt: null, secretKeyId: keyId === null ? { not: null } : { not: keyId } },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    return rows.map((row) => row.id);
  },
  lockLive,
  additionalDataOf,
  legacyAdditionalDataOf,
  async replaceEnvelope(tx, id, envelope) {
    await tx.crmConnection.update({ where: { id }, data: envelopeColumns(envelope) });
  },
};

export const rekeyCrmAdminTokens = (db: Database, keyring: Keyring): Promise<RekeyReport> =>
  rekeyRows(db, keyring, crmAdminTokenRows);
