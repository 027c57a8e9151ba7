import type { WhatsAppSender } from '../../generated/prisma/client';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';

/** Every sender of the workspace, connected or not (a disconnected one is kept for its history), by number. */
export async function listWhatsAppSenders({ db }: AppServices, principal: Principal): Promise<WhatsAppSender[]> {
  return db.whatsAppSender.findMany({
    where: { workspaceId: principal.workspaceId },
    orderBy: [{ e164: 'asc' }, { id: 'asc' }],
  });
}

export async function findOwnedWhatsAppSender({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => db.whatsAppSender.findFirst({ where }));
}

/**
 * Disconnects a sender: DISCONNECTED (it sends no more), kept with its conversations and messages.
 * Idempotent: a disconnected sender keeps its first disconnectedAt. Only `whatsapp sender connect`
 * connects it again.
 */
export async function disconnectWhatsAppSender(services: AppServices, principal: Principal, id: string): Promise<void> {
  await findOwnedWhatsAppSender(services, principal, id);
  await services.db.whatsAppSender.updateMany({
    where: { id, workspaceId: principal.workspaceId, status: 'CONNECTED' },
    data: { status: 'DISCONNECTED', disconnectedAt: new Date() },
  });
}

/** The sender as GET /whatsapp/senders answers it. */
export function whatsAppSenderView(sender: WhatsAppSender) {
  return {
    id: sender.id,
    e164: sender.e164,
    displayName: sender.displayName,
    provider: sender.provider,
    phoneNumberId: sender.phoneNumberId,
    businessAccountId: sender.businessAccountId,
    status: sender.status,
    dailyRecipientLimit: sender.dailyRecipientLimit,
    messagesPerSecond: sender.messagesPerSecond,
    connectedAt: sender.connectedAt.toISOString(),
    disconnectedAt: sender.disconnectedAt?.toISOString() ?? null,
  };
}
