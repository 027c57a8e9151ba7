import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../database';
import { baseUrlSchema } from '../http/base-url';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { seal, type Envelope } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import {
  envelopeColumns,
  rekeyRows,
  WIPED_ENVELOPE,
  type RekeyReport,
  type SealedRowKind,
} from '../secrets/sealed-rows';
import { isUuid } from '../uuid';
import { GOOGLE_TOKEN_URL, parseServiceAccountKey, type ServiceAccountKey } from './service-account-key';
import {
  additionalDataOf,
  legacyAdditionalDataOf,
  type SheetConnectionRow,
  type SheetProvider,
} from './opened-connection';
import { realBaseUrlRefusal } from '../provider-base-urls';

export const sheetBaseUrlSchema = baseUrlSchema.transform((value) => `${value}/`);

/** A spreadsheet id as Google assigns them, or the spreadsheet's address (…/spreadsheets/d/<id>/edit), which holds it. */
export const spreadsheetIdSchema = z
  .string()
  .trim()
  .transform((value) => /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(value)?.[1] ?? value)
  .pipe(z.string().regex(/^[A-Za-z0-9_-]{20,100}$/, 'must be a Google spreadsheet id (or its address)'));

/** A connection as it may be shown: never the key, not even a part of it. */
export type SheetConnectionView = {
  id: string;
  workspaceId: string;
  provider: SheetProvider;
  label: string;
  /** Share a spreadsheet with this e-mail (as an editor) for the connection to write it. */
  serviceAccountEmail: string;
  baseUrl: string | null;
  keyId: string | null;
  createdAt: string;
  rotatedAt: string | null;
};

export const sheetConnectionView = (row: SheetConnectionRow): SheetConnectionView => ({
  id: row.id,
  workspaceId: row.workspaceId,
  provider: row.provider as SheetProvider,
  label: row.label,
  serviceAccountEmail: row.serviceAccountEmail,
  baseUrl: row.baseUrl,
  keyId: row.secretKeyId,
  createdAt: row.createdAt.toISOString(),
  rotatedAt: row.rotatedAt?.toISOString() ?? null,
});

async function lockLive(tx: Prisma.TransactionClient, id: string, workspaceId?: string) {
  if (!isUuid(id)) return null;
  const rows = await tx.$queryRawUnsafe<SheetConnectionRow[]>(
    `SELECT * FROM "SheetConnection" WHERE id = $1::uuid AND "deletedAt" IS NULL AND ($2::uuid IS NULL OR "workspaceId" = $2::uuid) FOR UPDATE`,
    id,
    workspaceId ?? null,
  );
  return rows[0] ?? null;
}

function keyOf(text: string): ServiceAccountKey {
  try {
    return parseServiceAccountKey(text);
  } catch (error) {
    throw new ConflictError((error as Error).message);
  }
}

/**
 * A real Google connection's base URL is https on Google's own hosts, and its key's token_uri is Google's token
 * endpoint: a key is JSON the customer hands over, and the JWT client posts a signed assertion to its token_uri.
 */
function checkRealGoogle(provider: SheetProvider, baseUrl: string | undefined, tokenUri: string): void {
  if (provider !== 'google') return;
  const refusal = baseUrl ? realBaseUrlRefusal('google', baseUrl) : null;
  if (refusal) throw new ConflictError(refusal);
  if (tokenUri !== GOOGLE_TOKEN_URL)
    throw new ConflictError(
      `a google connection's key must have token_uri ${GOOGLE_TOKEN_URL}, Google's token endpoint`,
    );
}

/** Connects a service account: its e-mail in clear, its JSON key sealed under the ring's current key, bound to the row. */
export async function connectSheets(
  db: Database,
  keyring: Keyring,
  request: { workspaceId: string; provider: SheetProvider; label?: string; baseUrl?: string; keyJson: string },
): Promise<SheetConnectionView> {
  const key = keyOf(request.keyJson);
  if (request.provider === 'google-twin' && !request.baseUrl)
    throw new ConflictError('a google-twin connection needs the base URL of its twin');
  checkRealGoogle(request.provider, request.baseUrl, key.token_uri);
  const workspace = await db.workspace.findFirst({
    where: { id: request.workspaceId, deletedAt: null },
    select: { id: true },
  });
  if (!workspace) throw new NotFoundError(`workspace ${request.workspaceId} not found`);
  const id = randomUUID();
  const envelope = seal(
    keyring,
    JSON.stringify(key),
    additionalDataOf({
      workspaceId: request.workspaceId,
      id,
      provider: request.provider,
      baseUrl: request.baseUrl ?? null,
    }),
  );
  const row = await db.sheetConnection.create({
    data: {
      id,
      workspaceId: request.workspaceId,
      provider: request.provider,
      label: request.label ?? request.provider,
      serviceAccountEmail: key.client_email,
      baseUrl: request.baseUrl ?? null,
      ...envelopeColumns(envelope),
    },
  });
  return sheetConnectionView(row);
}

export async function listSheetConnections(db: Database, workspaceId: string): Promise<SheetConnectionView[]> {
  const rows = await db.sheetConnection.findMany({
    where: { workspaceId, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map(sheetConnectionView);
}

/** A new JSON key of the same service account (its e-mail is what spreadsheets are shared with), sealed afresh. */
export async function rotateSheetKey(
  db: Database,
  keyring: Keyring,
  connectionId: string,
  keyJson: string,
): Promise<SheetConnectionView> {
  const key = keyOf(keyJson);
  return db.$transaction(async (tx) => {
    const row = await lockLive(tx, connectionId);
    if (!row) throw new NotFoundError(`no live sheets connection has id ${connectionId}`);
    if (key.client_email !== row.serviceAccountEmail)
      throw new ConflictError(
        `the key is of ${key.client_email}, not of ${row.serviceAccountEmail}: another account is another connection (sheets connect)`,
      );
    checkRealGoogle(row.provider as SheetProvider, row.baseUrl ?? undefined, key.token_uri);
    const envelope = seal(keyring, JSON.stringify(key), additionalDataOf(row));
    const rotatedAt = new Date();
    await tx.sheetConnection.update({ where: { id: row.id }, data: { ...envelopeColumns(envelope), rotatedAt } });
    return sheetConnectionView({ ...row, ...envelopeColumns(envelope), rotatedAt });
  });
}

/** `sheets rekey` (and the combined `secrets rekey`): every live connection's envelope moved to the current key. */
export const sheetConnectionRows: SealedRowKind<SheetConnectionRow> = {
  async idsNotUnder(db, keyId) {
    const rows = await db.sheetConnection.findMany({
      where: { deletedAt: null, secretKeyId: keyId === null ? { not: null } : { not: keyId } },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((row) => row.id);
  },
  lockLive: (tx, id) => lockLive(tx, id),
  additionalDataOf,
  legacyAdditionalDataOf,
  async replaceEnvelope(tx, id, envelope: Envelope) {
    await tx.sheetConnection.update({ where: { id }, data: envelopeColumns(envelope) });
  },
};

export const rekeySheetConnections = (db: Database, keyring: Keyring): Promise<RekeyReport> =>
  rekeyRows(db, keyring, sheetConnectionRows);

/** Removes a connection (soft-deleted, its key wiped); refused while a live sheet writes through it (sheet detach). */
export async function removeSheetConnection(db: Database, connectionId: string): Promise<{ id: string }> {
  return db.$transaction(async (tx) => {
    const row = await lockLive(tx, connectionId);
    if (!row) throw new NotFoundError(`no live sheets connection has id ${connectionId}`);
    const sheets = await tx.liveSheet.findMany({ where: { connectionId: row.id }, select: { campaignId: true } });
    if (sheets.length > 0)
      throw new ConflictError(
        `sheets connection ${row.id} writes the live sheets of campaign(s) ${sheets.map((sheet) => sheet.campaignId).join(', ')}; detach them first (sheet detach)`,
      );
    await tx.sheetConnection.update({ where: { id: row.id }, data: { deletedAt: new Date(), ...WIPED_ENVELOPE } });
    return { id: row.id };
  });
}

/** The sheet's advisory lock, as its chunks take it (lib/exports/export-lock.ts): waited for here. */
const lockSheet = (tx: Prisma.TransactionClient, sheetId: string) =>
  tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, `sheet:${sheetId}`);

/** What attach and detach write: the provider, and the sheet reset so that its next sync is a full pass. */
async function repoint(
  tx: Prisma.TransactionClient,
  sheetId: string,
  target: { provider: string; connectionId: string | null; spreadsheetId: string },
) {
  await tx.liveSheetRow.deleteMany({ where: { sheetId } });
  await tx.$executeRawUnsafe(
    `UPDATE "LiveSheet" SET provider = $2, "connectionId" = $3::uuid, "spreadsheetId" = $4, cursor = NULL, "rowCount" = 0,
       status = 'rebuilding', "publishedAt" = NULL, error = NULL, "updatedAt" = (clock_timestamp() AT TIME ZONE 'UTC')
     WHERE id = $1::uuid`,
    sheetId,
    target.provider,
    target.connectionId,
    target.spreadsheetId,
  );
}

/**
 * `sheet attach`: the campaign's live sheet writes, from its next sync on, to the customer's Google spreadsheet
 * (shared with the connection's e-mail), rewritten from scratch (a full pass). Refused to API keys by the spec
 * (section 5, "reading or attaching arbitrary spreadsheets"): an operator's command, no API route.
 */
export async function attachSpreadsheet(
  db: Database,
  request: { campaignId: string; connectionId: string; spreadsheetId: string },
): Promise<{ sheetId: string; provider: SheetProvider; spreadsheetId: string; serviceAccountEmail: string }> {
  return db.$transaction(
    async (tx) => {
      const sheet = await tx.liveSheet.findUnique({ where: { campaignId: request.campaignId } });
      if (!sheet)
        throw new NotFoundError(`campaign ${request.campaignId} has no live sheet (POST /campaigns/{id}/sheet first)`);
      const connection = await lockLive(tx, request.connectionId, sheet.workspaceId);
      if (!connection)
        throw new NotFoundError(`no live sheets connection ${request.connectionId} in the campaign's workspace`);
      await lockSheet(tx, sheet.id);
      await repoint(tx, sheet.id, {
        provider: connection.provider,
        connectionId: connection.id,
        spreadsheetId: request.spreadsheetId,
      });
      return {
        sheetId: sheet.id,
        provider: connection.provider as SheetProvider,
        spreadsheetId: request.spreadsheetId,
        serviceAccountEmail: connection.serviceAccountEmail,
      };
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
}

/** `sheet detach`: back to the local provider (the customer's spreadsheet is left as it is), rewritten from scratch. */
export async function detachSpreadsheet(
  db: Database,
  campaignId: string,
): Promise<{ sheetId: string; provider: 'local' }> {
  return db.$transaction(
    async (tx) => {
      const sheet = await tx.liveSheet.findUnique({ where: { campaignId } });
      if (!sheet) throw new NotFoundError(`campaign ${campaignId} has no live sheet`);
      await lockSheet(tx, sheet.id);
      // The local provider names a spreadsheet by the sheet's id (api/sheets/sheets.ts).
      await repoint(tx, sheet.id, { provider: 'local', connectionId: null, spreadsheetId: sheet.id });
      return { sheetId: sheet.id, provider: 'local' as const };
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
}
