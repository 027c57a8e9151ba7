import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../database';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { boundAdditionalData, rowOnlyAdditionalData } from '../secrets/binding';
import { seal, type Envelope } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import {
  envelopeColumns,
  envelopeFromColumns,
  rekeyRows,
  WIPED_ENVELOPE,
  type RekeyReport,
  openSealedRow,
  type SealedRowKind,
} from '../secrets/sealed-rows';
import { isUuid } from '../uuid';
import { carrierBaseUrlSchema } from '../carrier-connections/connections';
import { realBaseUrlRefusal } from '../provider-base-urls';

/**
 * Meta WhatsApp Cloud API accounts connected to a workspace (docs/features/whatsapp/meta-cloud-api.md): the number's
 * real ids (phone_number_id, WhatsApp Business Account id, display number) in clear, the system user's access token
 * sealed with the key ring exactly as carrier connections are (lib/secrets/sealed-rows.ts). `meta-twin` speaks the same
 * Graph API from a local process (simulators/meta-twin/): what goes through it is recorded under that name.
 */
export const WHATSAPP_CONNECTION_PROVIDERS = ['meta', 'meta-twin'] as const;
export type WhatsAppConnectionProvider = (typeof WHATSAPP_CONNECTION_PROVIDERS)[number];

/** Meta's Graph API; a twin has no public address and must be given its base URL. */
export const GRAPH_BASE_URL = 'https://graph.facebook.com';

/** Meta's ids (phone_number_id, WABA id): digits. */
export const metaIdSchema = z
  .string()
  .trim()
  .regex(/^\d{5,32}$/, 'must be Meta\u2019s numeric id (5 to 32 digits)');
/** The Graph API's base URL override (a twin's): the carriers' rule for a base URL. */
export const graphBaseUrlSchema = carrierBaseUrlSchema;

export interface WhatsAppConnectionRow {
  id: string;
  workspaceId: string;
  provider: string;
  label: string;
  phoneNumberId: string;
  businessAccountId: string;
  displayPhoneNumber: string;
  baseUrl: string | null;
  secretKeyId: string | null;
  secretNonce: string | null;
  secretCiphertext: string | null;
  createdAt: Date;
  rotatedAt: Date | null;
  deletedAt: Date | null;
}

export interface WhatsAppConnectRequest {
  workspaceId: string;
  provider: WhatsAppConnectionProvider;
  label?: string;
  phoneNumberId: string;
  businessAccountId: string;
  displayPhoneNumber: string;
  baseUrl?: string;
  accessToken: string;
}

/** A connection as it may be shown: never the token, nor a part of it. */
export type WhatsAppConnectionView = {
  id: string;
  workspaceId: string;
  provider: WhatsAppConnectionProvider;
  label: string;
  phoneNumberId: string;
  businessAccountId: string;
  displayPhoneNumber: string;
  /** The stored override; null: Meta's Graph API. */
  baseUrl: string | null;
  keyId: string | null;
  createdAt: string;
  rotatedAt: string | null;
};

/** A connection opened for the Graph client: where to send, the ids, and the token in clear. */
export interface OpenedWhatsAppConnection {
  id: string;
  workspaceId: string;
  provider: WhatsAppConnectionProvider;
  phoneNumberId: string;
  businessAccountId: string;
  baseUrl: string;
  accessToken: string;
}

/**
 * What the envelope is bound to (lib/secrets/binding.ts): the row, its workspace, its provider and its base URL. A
 * copied envelope, or one left on a row whose provider or base URL was changed in the table, fails authentication.
 */
type Bound = { workspaceId: string; id: string; provider: string; baseUrl: string | null };
const additionalDataOf = (row: Bound) =>
  boundAdditionalData({ kind: 'whatsapp-connection', ...row, address: row.baseUrl });
/** What rows were sealed with before their binding (until `secrets rekey` moves them). */
const legacyAdditionalDataOf = (row: { workspaceId: string; id: string }) =>
  rowOnlyAdditionalData('whatsapp-connection', row);

const viewOf = (row: WhatsAppConnectionRow): WhatsAppConnectionView => ({
  id: row.id,
  workspaceId: row.workspaceId,
  provider: row.provider as WhatsAppConnectionProvider,
  label: row.label,
  phoneNumberId: row.phoneNumberId,
  businessAccountId: row.businessAccountId,
  displayPhoneNumber: row.displayPhoneNumber,
  baseUrl: row.baseUrl,
  keyId: row.secretKeyId,
  createdAt: row.createdAt.toISOString(),
  rotatedAt: row.rotatedAt?.toISOString() ?? null,
});

const sealToken = (keyring: Keyring, token: string, row: Bound) =>
  seal(keyring, JSON.stringify({ accessToken: token }), additionalDataOf(row));

/** Connects a Meta account's number to a workspace: ids in clear, the token sealed under the ring's current key. */
export async function connectWhatsApp(
  db: Database,
  keyring: Keyring,
  request: WhatsAppConnectRequest,
): Promise<WhatsAppConnectionView> {
  if (request.provider === 'meta-twin' && !request.baseUrl)
    throw new ConflictError('a meta-twin connection needs the base URL of its twin');
  const refusal = request.provider === 'meta' && request.baseUrl && realBaseUrlRefusal('meta', request.baseUrl);
  if (refusal) throw new ConflictError(refusal);
  const workspace = await db.workspace.findFirst({
    where: { id: request.workspaceId, deletedAt: null },
    select: { id: true },
  });
  if (!workspace) throw new NotFoundError(`workspace ${request.workspaceId} not found`);
  const id = randomUUID();
  const row = await db.whatsAppConnection.create({
    data: {
      id,
      workspaceId: request.workspaceId,
      provider: request.provider,
      label: request.label ?? request.provider,
      phoneNumberId: request.phoneNumberId,
      businessAccountId: request.businessAccountId,
      displayPhoneNumber: request.displayPhoneNumber,
      baseUrl: request.baseUrl ?? null,
      ...envelopeColumns(
        sealToken(keyring, request.accessToken, {
          workspaceId: request.workspaceId,
          id,
          provider: request.provider,
          baseUrl: request.baseUrl ?? null,
        }),
      ),
    },
  });
  return viewOf(row);
}

export async function listWhatsAppConnections(db: Database, workspaceId: string): Promise<WhatsAppConnectionView[]> {
  const rows = await db.whatsAppConnection.findMany({
    where: { workspaceId, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map(viewOf);
}

async function lockLive(tx: Prisma.TransactionClient, id: string): Promise<WhatsAppConnectionRow | null> {
  if (!isUuid(id)) return null;
  const rows = await tx.$queryRawUnsafe<WhatsAppConnectionRow[]>(
    `SELECT * FROM "WhatsAppConnection" WHERE id = $1::uuid AND "deletedAt" IS NULL FOR UPDATE`,
    id,
  );
  return rows[0] ?? null;
}

function openRow(keyring: Keyring, row: WhatsAppConnectionRow): OpenedWhatsAppConnection {
  const envelope = envelopeFromColumns(row);
  if (!envelope) throw new Error(`whatsapp connection ${row.id} holds no secret material`);
  const { accessToken } = JSON.parse(openSealedRow(keyring, whatsappConnectionRows, row, envelope)) as {
    accessToken: string;
  };
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    provider: row.provider as WhatsAppConnectionProvider,
    phoneNumberId: row.phoneNumberId,
    businessAccountId: row.businessAccountId,
    baseUrl: row.baseUrl ?? GRAPH_BASE_URL,
    accessToken,
  };
}

/** A live connection by id, opened (what a sender bound to it sends with); null when unknown or removed. */
export async function openWhatsAppConnection(
  db: Database,
  keyring: Keyring,
  id: string,
): Promise<OpenedWhatsAppConnection | null> {
  if (!isUuid(id)) return null;
  const row = await db.whatsAppConnection.findFirst({ where: { id, deletedAt: null } });
  return row && openRow(keyring, row);
}

/** Replaces a live connection's access token, sealed afresh under the current key; rotatedAt set. */
export async function rotateWhatsAppToken(
  db: Database,
  keyring: Keyring,
  connectionId: string,
  accessToken: string,
): Promise<WhatsAppConnectionView> {
  return db.$transaction(async (tx) => {
    const row = await lockLive(tx, connectionId);
    if (!row) throw new NotFoundError(`no live whatsapp connection has id ${connectionId}`);
    const envelope = sealToken(keyring, accessToken, row);
    const rotatedAt = new Date();
    await tx.whatsAppConnection.update({ where: { id: row.id }, data: { ...envelopeColumns(envelope), rotatedAt } });
    return viewOf({ ...row, ...envelopeColumns(envelope), rotatedAt });
  });
}

/** `whatsapp rekey` (and the combined `secrets rekey`): every live connection's envelope moved to the current key. */
export const whatsappConnectionRows: SealedRowKind<WhatsAppConnectionRow> = {
  async idsNotUnder(db, keyId) {
    const rows = await db.whatsAppConnection.findMany({
      where: { deletedAt: null, secretKeyId: keyId === null ? { not: null } : { not: keyId } },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((row) => row.id);
  },
  lockLive,
  additionalDataOf,
  legacyAdditionalDataOf,
  async replaceEnvelope(tx, id, envelope: Envelope) {
    await tx.whatsAppConnection.update({ where: { id }, data: envelopeColumns(envelope) });
  },
};

export const rekeyWhatsAppConnections = (db: Database, keyring: Keyring): Promise<RekeyReport> =>
  rekeyRows(db, keyring, whatsappConnectionRows);

/**
 * Removes a connection: soft-deleted and its token wiped. Refused while a CONNECTED sender sends through it
 * (disconnect it first, DELETE /whatsapp/senders/{id}), so no sender is left silently unable to send.
 */
export async function removeWhatsAppConnection(db: Database, connectionId: string): Promise<{ id: string }> {
  return db.$transaction(async (tx) => {
    const row = await lockLive(tx, connectionId);
    if (!row) throw new NotFoundError(`no live whatsapp connection has id ${connectionId}`);
    const senders = await tx.whatsAppSender.findMany({
      where: { connectionId: row.id, status: 'CONNECTED' },
      select: { e164: true },
    });
    if (senders.length)
      throw new ConflictError(
        `whatsapp connection ${row.id} is in use by sender ${senders.map((s) => s.e164).join(', ')}; disconnect it first`,
      );
    await tx.whatsAppConnection.update({ where: { id: row.id }, data: { ...WIPED_ENVELOPE, deletedAt: new Date() } });
    return { id: row.id };
  });
}

/** The workspace's live connection by id, for binding a sender (its ids become the sender's). */
export async function liveWhatsAppConnectionOf(
  tx: Prisma.TransactionClient,
  workspaceId: string,
  connectionId: string,
): Promise<WhatsAppConnectionRow | null> {
  if (!isUuid(connectionId)) return null;
  return tx.whatsAppConnection.findFirst({ where: { id: connectionId, workspaceId, deletedAt: null } });
}
