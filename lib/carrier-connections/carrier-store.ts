import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../database';
import type { RunSql } from '../run-sql';
import { isUuid } from '../uuid';
import type { Envelope } from '../secrets/envelope';
import { envelopeColumns, envelopeFromColumns, WIPED_ENVELOPE } from '../secrets/sealed-rows';

/** A connection row as the store reads it: identifiers in clear, the envelope sealed (null once removed). */
export interface CarrierConnectionRow {
  id: string;
  workspaceId: string;
  provider: string;
  label: string;
  accountSid: string | null;
  apiKeySid: string | null;
  /** Twilio: the envelope holds the account's auth token (lib/carrier-connections/connections.ts). */
  authTokenSet: boolean;
  connectionRef: string | null;
  baseUrl: string | null;
  secretKeyId: string | null;
  /** base64 */
  secretNonce: string | null;
  /** base64 */
  secretCiphertext: string | null;
  createdAt: Date;
  rotatedAt: Date | null;
  deletedAt: Date | null;
}

export type NewCarrierConnectionRow = Pick<
  CarrierConnectionRow,
  | 'id'
  | 'workspaceId'
  | 'provider'
  | 'label'
  | 'accountSid'
  | 'apiKeySid'
  | 'connectionRef'
  | 'baseUrl'
  | 'authTokenSet'
> & { envelope: Envelope };

export const envelopeOf = (row: CarrierConnectionRow): Envelope | null => envelopeFromColumns(row);

export function insertCarrierConnection(db: Database, row: NewCarrierConnectionRow): Promise<CarrierConnectionRow> {
  const { envelope, ...identifiers } = row;
  return db.carrierConnection.create({ data: { ...identifiers, ...envelopeColumns(envelope) } });
}

/** The workspace's live connections, oldest first. */
export function liveCarrierConnections(db: Database, workspaceId: string): Promise<CarrierConnectionRow[]> {
  return db.carrierConnection.findMany({ where: { workspaceId, deletedAt: null }, orderBy: { createdAt: 'asc' } });
}

/**
 * Locks a live connection until the transaction ends: FOR UPDATE (rotate, rekey, remove) or FOR SHARE (binding
 * a number to it), so a number is never bound to a connection being removed. `workspaceId` given: only that
 * workspace's. Null: no such live connection.
 */
export async function lockLiveCarrierConnection(
  tx: Prisma.TransactionClient,
  id: string,
  mode: 'update' | 'share',
  workspaceId?: string,
): Promise<CarrierConnectionRow | null> {
  // A uuid column: an id that is not a UUID names no connection (and must not reach the query).
  if (!isUuid(id) || (workspaceId !== undefined && !isUuid(workspaceId))) return null;
  const lock = mode === 'update' ? 'FOR UPDATE' : 'FOR SHARE';
  const rows = await tx.$queryRawUnsafe<CarrierConnectionRow[]>(
    `SELECT * FROM "CarrierConnection"
      WHERE id = $1::uuid AND "deletedAt" IS NULL AND ($2::uuid IS NULL OR "workspaceId" = $2::uuid)
      ${lock}`,
    id,
    workspaceId ?? null,
  );
  return rows[0] ?? null;
}

export async function replaceEnvelope(
  tx: Prisma.TransactionClient,
  id: string,
  envelope: Envelope,
  rotatedAt?: Date,
  /** Given when the secrets changed (a rotation): whether they hold the auth token now. */
  authTokenSet?: boolean,
): Promise<void> {
  await tx.carrierConnection.update({
    where: { id },
    data: { ...envelopeColumns(envelope), rotatedAt, authTokenSet },
  });
}

/** The e164 of the numbers bound to a connection. */
export async function numbersBoundTo(tx: Prisma.TransactionClient, connectionId: string): Promise<string[]> {
  const numbers = await tx.phoneNumber.findMany({
    where: { carrierConnectionId: connectionId },
    select: { e164: true },
    orderBy: { e164: 'asc' },
  });
  return numbers.map((number) => number.e164);
}

/** Soft-deletes a connection and wipes its envelope: a removed account's secrets are not kept. */
export async function markRemoved(tx: Prisma.TransactionClient, id: string): Promise<void> {
  await tx.carrierConnection.update({
    where: { id },
    data: { deletedAt: new Date(), ...WIPED_ENVELOPE, authTokenSet: false },
  });
}

/** Ids of the live connections whose envelope is not under `keyId`, for `carrier rekey`. */
export async function connectionsNotUnder(db: Database, keyId: string | null): Promise<string[]> {
  const rows = await db.carrierConnection.findMany({
    where: { deletedAt: null, secretKeyId: keyId === null ? { not: null } : { not: keyId } },
    select: { id: true },
    orderBy: { createdAt: 'asc' },
  });
  return rows.map((row) => row.id);
}

/**
 * A live connection by id: one round trip on the pool, a named statement (what every dial and carrier request opens
 * when its process does not keep it, lib/carrier-connections/opened-connections.ts).
 */
export async function liveConnection(db: Database, id: string): Promise<CarrierConnectionRow | null> {
  if (!isUuid(id)) return null;
  const [found] = await db.sql<CarrierConnectionRow>(
    {
      name: 'live_carrier_connection',
      text: `SELECT k.id::text, k."workspaceId"::text, k.provider, k.label, k."accountSid", k."apiKeySid", k."authTokenSet", k."connectionRef",
                    k."baseUrl", k."secretKeyId", k."secretNonce", k."secretCiphertext",
                    -- Stored as UTC wall-clock time without a zone: read back as instants.
                    (k."createdAt" AT TIME ZONE 'UTC') AS "createdAt", (k."rotatedAt" AT TIME ZONE 'UTC') AS "rotatedAt",
                    NULL::timestamptz AS "deletedAt"
               FROM "CarrierConnection" k WHERE k.id = $1::uuid AND k."deletedAt" IS NULL`,
    },
    id,
  );
  return found ?? null;
}

/**
 * The rule of which connection a call from a number goes through, as SQL: the live carrier connection (alias `k`) the
 * workspace's number is bound to; no row when the number is not the workspace's, is bound to none, or to a removed one.
 * `workspaceId` and `e164` are SQL expressions (parameters, or columns of the statement it is part of): a campaign's
 * call (lib/calls/call-lines.ts takeLine), a test call (callerConnection) and carrierConnectionForCaller share this one rule.
 */
export const callerConnectionSql = (columns: string, workspaceId: string, e164: string) =>
  `SELECT ${columns} FROM "PhoneNumber" p
     JOIN "CarrierConnection" k ON k.id = p."carrierConnectionId" AND k."workspaceId" = p."workspaceId"
    WHERE p."workspaceId" = ${workspaceId} AND p.e164 = ${e164} AND k."deletedAt" IS NULL`;

/** The live connection the workspace's number is bound to; null when it is not the workspace's or has none. */
export async function connectionOfNumber(
  db: Database,
  workspaceId: string,
  e164: string,
): Promise<CarrierConnectionRow | null> {
  if (!isUuid(workspaceId)) return null;
  const rows = await db.$queryRawUnsafe<CarrierConnectionRow[]>(
    callerConnectionSql('k.*', '$1::uuid', '$2'),
    workspaceId,
    e164,
  );
  return rows[0] ?? null;
}

/**
 * The connection a call from the workspace's number is recorded on, and the provider it records (a twin's calls never
 * pass for real ones); null: the number is bound to no live connection, and the call goes through the simulated carrier.
 */
export async function callerConnection(
  sql: RunSql,
  workspaceId: string,
  e164: string,
): Promise<{ id: string; provider: string } | null> {
  const [row] = await sql<{ id: string; provider: string }>(
    callerConnectionSql('k.id::text, k.provider', '$1::uuid', '$2'),
    workspaceId,
    e164,
  );
  return row ?? null;
}

/** Of the given numbers, those bound to no live carrier connection of the workspace (or not the workspace's), in order. */
export async function unboundNumbers(sql: RunSql, workspaceId: string, e164s: readonly string[]): Promise<string[]> {
  if (e164s.length === 0) return [];
  const bound = await sql<{ e164: string }>(
    `SELECT p.e164 FROM (${callerConnectionSql('p.e164', '$1::uuid', 'ANY($2::text[])')}) p`,
    workspaceId,
    [...e164s],
  );
  const boundSet = new Set(bound.map((row) => row.e164));
  return e164s.filter((e164) => !boundSet.has(e164));
}

/** The workspace's live connection of this provider and label, oldest first (ensureCarrierConnection). */
export function liveConnectionByLabel(
  db: Database,
  workspaceId: string,
  provider: string,
  label: string,
): Promise<CarrierConnectionRow | null> {
  return db.carrierConnection.findFirst({
    where: { workspaceId, provider, label, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
}

export async function updateBaseUrl(tx: Prisma.TransactionClient, id: string, baseUrl: string | null): Promise<void> {
  await tx.carrierConnection.update({ where: { id }, data: { baseUrl } });
}

/** Binds the workspace's numbers that have no connection to this one; answers how many. */
export async function bindUnboundNumbers(db: Database, workspaceId: string, connectionId: string): Promise<number> {
  const { count } = await db.phoneNumber.updateMany({
    where: { workspaceId, carrierConnectionId: null },
    data: { carrierConnectionId: connectionId },
  });
  return count;
}
