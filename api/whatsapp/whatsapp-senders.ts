import type { WhatsAppSender } from '../../generated/prisma/client';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { disconnectConnectedSender, whatsAppSenderWhere, whatsAppSendersOfWorkspace } from './whatsapp-store';

/** Every sender of the workspace, connected or not (a disconnected one is kept for its history), by number. */
export async function listWhatsAppSenders({ db }: AppServices, principal: Principal): Promise<WhatsAppSender[]> {
  return whatsAppSendersOfWorkspace(db, principal.workspaceId);
}

export async function findOwnedWhatsAppSender({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => whatsAppSenderWhere(db, where));
}

/**
 * Disconnects a sender: DISCONNECTED (it sends no more), kept with its conversations and messages.
 * Idempotent: a disconnected sender keeps its first disconnectedAt. Only `whatsapp sender connect`
 * connects it again.
 */
export async function disconnectWhatsAppSender(services: AppServices, principal: Principal, id: string): Promise<void> {
  await findOwnedWhatsAppSender(services, principal, id);
  await disconnectConnectedSender(services.db, principal.workspaceId, id);
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
