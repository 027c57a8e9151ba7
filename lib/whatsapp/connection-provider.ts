import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { openWhatsAppConnection, type OpenedWhatsAppConnection } from './connections';
import { createGraphWhatsAppClient } from './graph-client';
import type { WhatsAppProvider } from './provider';

/** Graph clients by connection and token: a rotated token makes a new client; a few hundred at most. */
const CLIENTS_MAX = 256;

/**
 * The WhatsAppProvider of a process: a sender bound to a Meta connection (lib/whatsapp/connections.ts) sends through
 * that connection's Graph client (its base URL and Bearer token: Meta, or the Meta twin); a template is submitted and
 * read through the connection of its Business Account; anything else goes to `fallback` (the embedded simulated
 * provider). The name is the fallback's: a connection's own provider (meta, meta-twin) is recorded on its senders.
 */
export function createConnectionWhatsAppProvider({
  db,
  keyring,
  fallback,
}: {
  db: Database;
  keyring: Keyring | undefined;
  fallback: WhatsAppProvider;
}): WhatsAppProvider & { providerOfAccount(businessAccountId: string): Promise<string> } {
  const clients = new Map<string, ReturnType<typeof createGraphWhatsAppClient>>();
  const clientOf = (connection: OpenedWhatsAppConnection) => {
    const key = `${connection.id}:${connection.baseUrl}:${connection.accessToken}`;
    let client = clients.get(key);
    if (!client) {
      if (clients.size >= CLIENTS_MAX) {
        for (const old of clients.values()) old.close();
        clients.clear();
      }
      client = createGraphWhatsAppClient({
        baseUrl: connection.baseUrl,
        accessToken: connection.accessToken,
        name: connection.provider,
      });
      clients.set(key, client);
    }
    return client;
  };
  const opened = async (connectionId: string | null | undefined) =>
    connectionId && keyring ? openWhatsAppConnection(db, keyring, connectionId) : null;
  const byNumber = async (phoneNumberId: string) => {
    const sender = await db.whatsAppSender.findFirst({
      where: { phoneNumberId, connectionId: { not: null } },
      select: { connectionId: true },
    });
    const connection = await opened(sender?.connectionId);
    return connection ? clientOf(connection) : fallback;
  };
  const byAccount = async (businessAccountId: string) => {
    const row = await db.whatsAppConnection.findFirst({
      where: { businessAccountId, deletedAt: null },
      orderBy: { createdAt: 'asc' },
      select: { id: true },
    });
    const connection = await opened(row?.id);
    return connection ? clientOf(connection) : fallback;
  };
  return {
    name: fallback.name,
    async sendMessage(request) {
      return (await byNumber(request.phoneNumberId)).sendMessage(request);
    },
    async prepareSend(request) {
      const provider = await byNumber(request.phoneNumberId);
      return () => provider.sendMessage(request);
    },
    async submitTemplate(submission) {
      return (await byAccount(submission.businessAccountId)).submitTemplate(submission);
    },
    async getTemplate(templateId, businessAccountId) {
      const provider = businessAccountId ? await byAccount(businessAccountId) : fallback;
      return provider.getTemplate(templateId, businessAccountId);
    },
    async providerOfAccount(businessAccountId) {
      return (await byAccount(businessAccountId)).name;
    },
  };
}
