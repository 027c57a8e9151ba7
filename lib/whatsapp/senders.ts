import { randomInt } from 'node:crypto';
import type { Database } from '../database';
import { ConflictError, NotFoundError } from '../operator-refusals';
import { liveWhatsAppConnectionOf } from './connections';
import { SIMULATED_PROVIDER } from '../simulators';

/** A numeric id as the platform's are (phone_number_id, WhatsApp Business Account id): 15 digits. */
export const platformId = () => `${randomInt(1, 10)}${Array.from({ length: 14 }, () => randomInt(0, 10)).join('')}`;

export interface SenderConnection {
  workspaceId: string;
  /** Normalised E.164 (lib/phone.ts). */
  e164: string;
  displayName?: string;
  /** FALLBACK_WHATSAPP_PROVIDER: the provider the number is connected through (a connection's own provider wins). */
  provider: string;
  /**
   * A Meta Cloud API connection of the workspace (lib/whatsapp/connections.ts): the sender takes its real
   * phone_number_id and WhatsApp Business Account id and its provider (meta, meta-twin), and sends with its token.
   * Unset: the embedded simulated provider, with ids of its own.
   */
  connectionId?: string;
}

/**
 * Connects a WhatsApp number to a workspace (the operator's `whatsapp sender connect`; signup and QR
 * connection are refused to keys). The number gets a phone_number_id of its own and the workspace's
 * WhatsApp Business Account: the one its earlier senders have (templates belong to it), else a new one.
 *
 * Connecting a number the workspace already has re-connects it: same id and provider ids, CONNECTED,
 * connectedAt now and disconnectedAt cleared when it was disconnected (left alone when it is connected);
 * a given display name replaces the stored one. A number CONNECTED in another workspace is refused
 * (ConflictError) until it is disconnected there. Connects of one number take turns on an advisory lock.
 */
export async function connectWhatsAppSender(db: Database, connection: SenderConnection): Promise<{ id: string }> {
  const { workspaceId, e164 } = connection;
  let { provider } = connection;
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  const displayName = connection.displayName === undefined ? {} : { displayName: connection.displayName };
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`whatsapp-sender:${e164}`}, 0))`;
    const elsewhere = await tx.whatsAppSender.findFirst({
      where: { e164, status: 'CONNECTED', workspaceId: { not: workspaceId } },
      select: { workspaceId: true },
    });
    if (elsewhere)
      throw new ConflictError(
        `${e164} is a connected WhatsApp sender of workspace ${elsewhere.workspaceId}; disconnect it there first (DELETE /whatsapp/senders/{id})`,
      );
    const bound = connection.connectionId
      ? await liveWhatsAppConnectionOf(tx, workspaceId, connection.connectionId)
      : null;
    if (connection.connectionId && !bound)
      throw new NotFoundError(`no live whatsapp connection ${connection.connectionId} in workspace ${workspaceId}`);
    if (bound) provider = bound.provider;
    const ids = bound
      ? {
          provider,
          connectionId: bound.id,
          phoneNumberId: bound.phoneNumberId,
          businessAccountId: bound.businessAccountId,
        }
      : {};
    const held = await tx.whatsAppSender.findUnique({ where: { workspaceId_e164: { workspaceId, e164 } } });
    if (held) {
      const reconnect =
        held.status === 'CONNECTED'
          ? {}
          : { status: 'CONNECTED' as const, connectedAt: new Date(), disconnectedAt: null };
      await tx.whatsAppSender.update({ where: { id: held.id }, data: { ...reconnect, ...displayName, ...ids } });
      return { id: held.id };
    }
    if (bound)
      return tx.whatsAppSender.create({
        data: {
          workspaceId,
          e164,
          ...displayName,
          provider: bound.provider,
          connectionId: bound.id,
          phoneNumberId: bound.phoneNumberId,
          businessAccountId: bound.businessAccountId,
        },
        select: { id: true },
      });
    const account = await tx.whatsAppSender.findFirst({
      where: { workspaceId, provider },
      orderBy: [{ connectedAt: 'asc' }, { id: 'asc' }],
      select: { businessAccountId: true },
    });
    return tx.whatsAppSender.create({
      data: {
        workspaceId,
        e164,
        ...displayName,
        provider,
        phoneNumberId: platformId(),
        businessAccountId: account?.businessAccountId ?? platformId(),
      },
      select: { id: true },
    });
  });
}

/**
 * Which of these senders the simulated provider carries (provider simulated, docs/configuration.md#simulators): their
 * messages are marked simulated. One query for a page of messages (at most its distinct senders).
 */
export async function simulatedSenderIds(db: Database, senderIds: readonly string[]): Promise<ReadonlySet<string>> {
  const distinct = [...new Set(senderIds)];
  if (!distinct.length) return new Set();
  const rows = await db.whatsAppSender.findMany({
    where: { id: { in: distinct }, provider: SIMULATED_PROVIDER },
    select: { id: true },
  });
  return new Set(rows.map((row) => row.id));
}
