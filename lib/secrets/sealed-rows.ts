import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../database';
import { isUuid } from '../uuid';
import { openBound, resealBound } from './binding';
import { seal, type Envelope } from './envelope';
import type { Keyring } from './keyring';

/**
 * Every table that holds a customer's secret (carrier, WhatsApp, sheet and store connections) keeps its envelope in
 * the same three columns: the key's id in clear (what `rekey` looks for), the nonce and the ciphertext in base64.
 */
export interface EnvelopeColumns {
  secretKeyId: string | null;
  secretNonce: string | null;
  secretCiphertext: string | null;
}

export const envelopeColumns = (envelope: Envelope): EnvelopeColumns => ({
  secretKeyId: envelope.keyId,
  secretNonce: Buffer.from(envelope.nonce).toString('base64'),
  secretCiphertext: Buffer.from(envelope.ciphertext).toString('base64'),
});

/** The envelope a row holds; null once its secrets were wiped (a removed connection). */
export const envelopeFromColumns = (row: EnvelopeColumns): Envelope | null =>
  row.secretKeyId && row.secretNonce && row.secretCiphertext
    ? {
        keyId: row.secretKeyId,
        nonce: Buffer.from(row.secretNonce, 'base64'),
        ciphertext: Buffer.from(row.secretCiphertext, 'base64'),
      }
    : null;

/** The columns that wipe a row's secrets (removal): a removed account's secrets are not kept. */
export const WIPED_ENVELOPE: EnvelopeColumns = { secretKeyId: null, secretNonce: null, secretCiphertext: null };

/** One kind of sealed row, as its feature's store file reaches it: what `rekeyRows` needs and nothing else. */
export interface SealedRowKind<Row extends EnvelopeColumns & { id: string }> {
  /** Ids of the live sealed rows whose envelope is not under `keyId`; null: every live sealed row. */
  idsNotUnder(db: Database, keyId: string | null): Promise<string[]>;
  /** The live row, locked FOR UPDATE until the transaction ends; null once removed. */
  lockLive(tx: Prisma.TransactionClient, id: string): Promise<Row | null>;
  /** The additional data the row's envelope is sealed with (its identity: a copied envelope does not open). */
  additionalDataOf(row: Row): string;
  /**
   * The kinds sealed before their binding (lib/secrets/binding.ts): the additional data a row may still be sealed with,
   * opened as well until `secrets rekey` re-seals it under additionalDataOf.
   */
  legacyAdditionalDataOf?(row: Row): string;
  replaceEnvelope(tx: Prisma.TransactionClient, id: string, envelope: Envelope): Promise<void>;
}

/**
 * A kind whose rows were once kept in clear (result webhook endpoints', store webhooks' signing secrets): the rows still
 * holding a clear secret are sealed, and their clear column emptied, by the same `rekey` (sealClearRows).
 */
export interface ClearSecretRowKind<Row extends EnvelopeColumns & { id: string }> extends SealedRowKind<Row> {
  /** Ids of the live rows whose secret is still in clear. */
  idsInClear(db: Database): Promise<string[]>;
  /** The clear secret of a locked row; null once sealed. */
  clearSecretOf(row: Row): string | null;
  /** Stores the envelope and empties the clear column, in the one statement. */
  replaceClear(tx: Prisma.TransactionClient, id: string, envelope: Envelope): Promise<void>;
}

/**
 * Where a kind whose rows were once kept in clear keeps its secret: a table with `id`, `workspaceId` and `deletedAt`,
 * an envelope's three columns and the clear one. Names are the schema's, written here, never a tenant's.
 */
export interface ClearSecretTable<Row extends EnvelopeColumns & { id: string }> {
  /** The table's name in the schema (quoted in SQL). */
  table: string;
  /** The envelope's columns (keyId, nonce, ciphertext) and the clear secret's column. */
  columns: { keyId: string; nonce: string; ciphertext: string; clear: string };
  /** The row's other columns its binding reads (Row's fields of the same names). */
  bindingColumns: readonly string[];
  additionalDataOf(row: Row): string;
}

/** A schema name as SQL: the names are the schema's, written in code, never a tenant's. */
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The ClearSecretRowKind of such a table: the same statements for every one, over its own names. Written with
 * positional parameters ($queryRawUnsafe) rather than Prisma.sql, so that this module loads no Prisma runtime (the
 * export worker reads sealed rows without Prisma: test/exports/export-worker.test.ts).
 */
export function clearSecretRowKind<Row extends EnvelopeColumns & { id: string; secret: string | null }>(
  where: ClearSecretTable<Row>,
): ClearSecretRowKind<Row> {
  const table = quoted(where.table);
  const [keyId, nonce, ciphertext, clear] = [
    where.columns.keyId,
    where.columns.nonce,
    where.columns.ciphertext,
    where.columns.clear,
  ].map(quoted) as [string, string, string, string];
  const setEnvelope = `${keyId} = $2, ${nonce} = $3, ${ciphertext} = $4`;
  const envelopeValues = (envelope: Envelope) => {
    const sealed = envelopeColumns(envelope);
    return [sealed.secretKeyId, sealed.secretNonce, sealed.secretCiphertext];
  };
  const ids = async (db: Database, condition: string, ...values: unknown[]) =>
    (
      await db.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT id::text AS id FROM ${table} WHERE "deletedAt" IS NULL AND ${condition} ORDER BY id`,
        ...values,
      )
    ).map((row) => row.id);
  return {
    idsNotUnder: (db, underKeyId) =>
      underKeyId === null
        ? ids(db, `${keyId} IS NOT NULL`)
        : ids(db, `${keyId} IS NOT NULL AND ${keyId} <> $1`, underKeyId),
    idsInClear: (db) => ids(db, `${clear} IS NOT NULL`),
    async lockLive(tx, id) {
      if (!isUuid(id)) return null;
      const rows = await tx.$queryRawUnsafe<Row[]>(
        `SELECT id::text AS id, "workspaceId"::text AS "workspaceId", ${where.bindingColumns.map(quoted).join(', ')},
                ${clear} AS secret, ${keyId} AS "secretKeyId", ${nonce} AS "secretNonce",
                ${ciphertext} AS "secretCiphertext"
           FROM ${table} WHERE id = $1::uuid AND "deletedAt" IS NULL FOR UPDATE`,
        id,
      );
      return rows[0] ?? null;
    },
    clearSecretOf: (row) => row.secret,
    additionalDataOf: (row) => where.additionalDataOf(row),
    async replaceEnvelope(tx, id, envelope) {
      await tx.$executeRawUnsafe(
        `UPDATE ${table} SET ${setEnvelope} WHERE id = $1::uuid`,
        id,
        ...envelopeValues(envelope),
      );
    },
    async replaceClear(tx, id, envelope) {
      await tx.$executeRawUnsafe(
        `UPDATE ${table} SET ${setEnvelope}, ${clear} = NULL WHERE id = $1::uuid`,
        id,
        ...envelopeValues(envelope),
      );
    },
  };
}

const holdsClearSecrets = <Row extends EnvelopeColumns & { id: string }>(
  kind: SealedRowKind<Row>,
): kind is ClearSecretRowKind<Row> => 'idsInClear' in kind;

export interface RekeyReport {
  keyId: string;
  rekeyed: string[];
  unreadable: Array<{ id: string; reason: string }>;
}

/** The secret a row holds, opened under its binding (or the additional data of before, for a row not yet moved). */
export function openSealedRow<Row extends EnvelopeColumns & { id: string }>(
  keyring: Keyring,
  kind: SealedRowKind<Row>,
  row: Row,
  envelope: Envelope,
): string {
  return openBound(keyring, envelope, kind.additionalDataOf(row), kind.legacyAdditionalDataOf?.(row));
}

/**
 * Moves every live row's envelope to the ring's current key (after a new key was put first), and a row still sealed
 * under the additional data of before its binding to its binding, one row per transaction. Those that do not open
 * (their key already dropped from the ring, damaged, or their provider or base URL changed in the table) are left as
 * they are and named; the others are moved all the same.
 */
export async function rekeyRows<Row extends EnvelopeColumns & { id: string }>(
  db: Database,
  keyring: Keyring,
  kind: SealedRowKind<Row>,
): Promise<RekeyReport> {
  const rekeyed: string[] = holdsClearSecrets(kind) ? await sealClearRows(db, keyring, kind) : [];
  const unreadable: Array<{ id: string; reason: string }> = [];
  // A kind with rows of before its binding: every row is looked at (only opening one tells under which it is sealed).
  const legacy = kind.legacyAdditionalDataOf !== undefined;
  for (const id of await kind.idsNotUnder(db, legacy ? null : keyring.currentKeyId)) {
    await db.$transaction(async (tx) => {
      const row = await kind.lockLive(tx, id);
      // Removed meanwhile, or rotated (sealed under the current key) meanwhile: nothing to move.
      const envelope = row && envelopeFromColumns(row);
      if (!row || !envelope || (!legacy && envelope.keyId === keyring.currentKeyId)) return;
      let moved: Envelope | null;
      try {
        moved = resealBound(keyring, envelope, kind.additionalDataOf(row), kind.legacyAdditionalDataOf?.(row));
      } catch (error) {
        unreadable.push({ id, reason: (error as Error).message });
        return;
      }
      if (!moved) return;
      await kind.replaceEnvelope(tx, row.id, moved);
      rekeyed.push(id);
    });
  }
  return { keyId: keyring.currentKeyId, rekeyed, unreadable };
}

/**
 * Seals every live row's secret still kept in clear under the ring's current key and empties its clear column, one row
 * per transaction (what `secrets rekey` does first): the ids sealed.
 */
export async function sealClearRows<Row extends EnvelopeColumns & { id: string }>(
  db: Database,
  keyring: Keyring,
  kind: ClearSecretRowKind<Row>,
): Promise<string[]> {
  const sealed: string[] = [];
  for (const id of await kind.idsInClear(db)) {
    await db.$transaction(async (tx) => {
      const row = await kind.lockLive(tx, id);
      const clear = row && kind.clearSecretOf(row);
      // Removed, or sealed, meanwhile.
      if (!row || clear === null) return;
      await kind.replaceClear(tx, row.id, seal(keyring, clear, kind.additionalDataOf(row)));
      sealed.push(id);
    });
  }
  return sealed;
}
