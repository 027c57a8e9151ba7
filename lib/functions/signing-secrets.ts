import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client';
import type { Database } from '../database';
import { generateWebhookSecret, signWebhook } from '../result-webhooks/result-webhooks';
import { boundAdditionalData } from '../secrets/binding';
import { open, seal, type Envelope } from '../secrets/envelope';
import type { Keyring } from '../secrets/keyring';
import { envelopeColumns, envelopeFromColumns, type EnvelopeColumns, type SealedRowKind } from '../secrets/sealed-rows';

/*
 * A workspace's function signing secrets (docs/features/functions.md#verifying-a-request): Standard Webhooks secrets
 * (whsec_…), sealed with the key ring, shown once. A rotation makes a new one current and gives the others
 * ROTATION_GRACE_MS more: until then every request carries a signature by each, so a receiver can switch its secret
 * whenever it likes within the day.
 */

/** A day: time for a customer to deploy the new secret, short enough that a leaked one stops signing soon. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

interface SecretRow extends EnvelopeColumns {
  id: string;
  workspaceId: string;
}

const additionalDataOf = (row: { workspaceId: string; id: string }) =>
  boundAdditionalData({
    kind: 'function-signing-secret',
    workspaceId: row.workspaceId,
    id: row.id,
    provider: 'functions',
    address: null,
  });

/** The envelope's columns, never null here: a retired secret's row is deleted by rekey, not wiped. */
function sealedColumns(envelope: Envelope) {
  const columns = envelopeColumns(envelope);
  return {
    secretKeyId: columns.secretKeyId!,
    secretNonce: columns.secretNonce!,
    secretCiphertext: columns.secretCiphertext!,
  };
}

const liveWhere = (now: Date) => ({ OR: [{ retiresAt: null }, { retiresAt: { gt: now } }] });

async function addSecret(tx: Prisma.TransactionClient, keyring: Keyring, workspaceId: string): Promise<string> {
  const secret = generateWebhookSecret();
  const id = randomUUID();
  await tx.functionSigningSecret.create({
    data: {
      id,
      workspaceId,
      ...sealedColumns(seal(keyring, secret, additionalDataOf({ workspaceId, id }))),
    },
  });
  return secret;
}

/** The workspace's first secret, made when it has none (its first function); null when it has one already. */
export async function ensureSigningSecret(
  tx: Prisma.TransactionClient,
  keyring: Keyring,
  workspaceId: string,
): Promise<string | null> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, `function-secret:${workspaceId}`);
  const current = await tx.functionSigningSecret.findFirst({ where: { workspaceId, retiresAt: null } });
  return current ? null : addSecret(tx, keyring, workspaceId);
}

/** `function secret rotate`: a new current secret (answered this once); the others retire after the grace period. */
export async function rotateSigningSecret(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  now = new Date(),
): Promise<{ secret: string; previousRetireAt: string }> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(
      `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
      `function-secret:${workspaceId}`,
    );
    const retireAt = new Date(now.getTime() + ROTATION_GRACE_MS);
    await tx.functionSigningSecret.updateMany({
      where: { workspaceId, retiresAt: null },
      data: { retiresAt: retireAt },
    });
    return { secret: await addSecret(tx, keyring, workspaceId), previousRetireAt: retireAt.toISOString() };
  });
}

/** The secrets that sign now (liveSecretRows, newest first), opened to sign one request. */
export const openSigningSecrets = (keyring: Keyring, rows: readonly SecretRow[]): string[] =>
  rows.map((row) => open(keyring, envelopeFromColumns(row)!, additionalDataOf(row)));

/**
 * The webhook-signature header: one `v1,<signature>` per live secret, space-separated, as Standard Webhooks lets a
 * sender sign with several secrets during a rotation (a receiver accepts the request when any one matches).
 */
export const signatureHeader = (secrets: readonly string[], id: string, timestamp: number, body: string) =>
  secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' ');

/** `secrets rekey`: the workspaces' live signing secrets moved to the ring's current key (a retired one signs nothing). */
export const functionSigningSecretRows: SealedRowKind<SecretRow> = {
  async idsNotUnder(db, keyId) {
    const rows = await db.functionSigningSecret.findMany({
      where: { ...liveWhere(new Date()), ...(keyId === null ? {} : { secretKeyId: { not: keyId } }) },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map((row) => row.id);
  },
  async lockLive(tx, id) {
    const rows = await tx.$queryRawUnsafe<SecretRow[]>(
      `SELECT id::text AS id, "workspaceId"::text AS "workspaceId", "secretKeyId", "secretNonce", "secretCiphertext"
         FROM "FunctionSigningSecret"
        WHERE id = $1::uuid AND ("retiresAt" IS NULL OR "retiresAt" > now() AT TIME ZONE 'UTC') FOR UPDATE`,
      id,
    );
    return rows[0] ?? null;
  },
  additionalDataOf,
  async replaceEnvelope(tx, id, envelope: Envelope) {
    await tx.functionSigningSecret.update({ where: { id }, data: sealedColumns(envelope) });
  },
};
