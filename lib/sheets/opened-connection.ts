import { boundAdditionalData, openBound, rowOnlyAdditionalData } from '../secrets/binding';
import type { Keyring } from '../secrets/keyring';
import { envelopeFromColumns, type EnvelopeColumns } from '../secrets/sealed-rows';
import type { Queryable } from '../sql-pool';
import { isUuid } from '../uuid';
import { GOOGLE_SHEETS_ROOT_URL, parseServiceAccountKey, type ServiceAccountKey } from './service-account-key';

// What the export worker opens a sheet's connection with: plain pg, and nothing that loads Prisma (the connections'
// management, lib/sheets/connections.ts, is the API's and the CLI's).

/**
 * Google service accounts connected to a workspace for live sheets (docs/features/sheets.md#the-google-provider): the
 * account's e-mail in clear (the customer shares a spreadsheet with it), its JSON key sealed with the key ring as
 * carrier connections' secrets are. `google-twin` is the same code against the local twin, recorded under its name.
 */
export const SHEET_PROVIDERS = ['google', 'google-twin'] as const;
export type SheetProvider = (typeof SHEET_PROVIDERS)[number];

export interface SheetConnectionRow extends EnvelopeColumns {
  id: string;
  workspaceId: string;
  provider: string;
  label: string;
  serviceAccountEmail: string;
  baseUrl: string | null;
  createdAt: Date;
  rotatedAt: Date | null;
  deletedAt: Date | null;
}

/** A connection opened for the provider: where to send requests and the key in clear. */
export interface OpenedSheetConnection {
  id: string;
  workspaceId: string;
  provider: SheetProvider;
  rootUrl: string;
  key: ServiceAccountKey;
}

/**
 * What the envelope is bound to (lib/secrets/binding.ts): the row, its workspace, its provider and its base URL. A
 * copied envelope, or one left on a row whose provider or base URL was changed in the table, fails authentication.
 */
export const additionalDataOf = (row: { workspaceId: string; id: string; provider: string; baseUrl: string | null }) =>
  boundAdditionalData({ kind: 'sheet-connection', ...row, address: row.baseUrl });
/** What rows were sealed with before their binding (until `secrets rekey` moves them). */
export const legacyAdditionalDataOf = (row: { workspaceId: string; id: string }) =>
  rowOnlyAdditionalData('sheet-connection', row);

/** A live connection opened for the provider (plain pg: the export worker carries no Prisma). Null: unknown or removed. */
export async function openSheetConnection(
  sql: Queryable,
  keyring: Keyring,
  id: string,
): Promise<OpenedSheetConnection | null> {
  if (!isUuid(id)) return null;
  const {
    rows: [row],
  } = await sql.query<SheetConnectionRow>(
    `SELECT id::text, "workspaceId"::text, provider, "baseUrl", "secretKeyId", "secretNonce", "secretCiphertext"
       FROM "SheetConnection" WHERE id = $1::uuid AND "deletedAt" IS NULL`,
    [id],
  );
  const envelope = row && envelopeFromColumns(row);
  if (!row || !envelope) return null;
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    provider: row.provider as SheetProvider,
    rootUrl: row.baseUrl ?? GOOGLE_SHEETS_ROOT_URL,
    key: parseServiceAccountKey(openBound(keyring, envelope, additionalDataOf(row), legacyAdditionalDataOf(row))),
  };
}
