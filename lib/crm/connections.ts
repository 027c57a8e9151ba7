import { randomUUID } from 'node:crypto';
import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { sealWebhookSecret } from './webhook-secret';
import { ConflictError, NotFoundError } from '../operator-refusals';
import type { CrmConnectionKind } from './shopify-webhook';

/** The path of a connection's public receiver (POST), under the API's public address. */
export const crmWebhookPath = (connectionId: string) => `/crm/connections/${connectionId}/webhooks`;

/** The receiver's full address: PUBLIC_BASE_URL (its trailing slashes dropped) + crmWebhookPath. */
export const crmWebhookUrl = (publicBaseUrl: string, connectionId: string) =>
  `${publicBaseUrl.replace(/\/+$/, '')}${crmWebhookPath(connectionId)}`;

export interface CrmConnectionRequest {
  workspaceId: string;
  kind: CrmConnectionKind;
  /** Already validated and lower-cased (shopDomainSchema). */
  shopDomain: string;
  /** The store's webhook signing secret, sealed with the key ring (webhook-secret.ts); never printed back, never logged. */
  secret: string;
}

/**
 * Connects a store to a workspace (the operator's `crm connect`; signing in to CRM connections is
 * refused to keys). One live connection per (kind, shop) across all workspaces: connecting a shop that
 * is connected (here or elsewhere) is refused (ConflictError) until that connection is deleted
 * (DELETE /crm/connections/{id}). Connects of one shop take turns on an advisory lock.
 */
export async function connectCrm(
  db: Database,
  keyring: Keyring,
  request: CrmConnectionRequest,
): Promise<{ id: string }> {
  const { workspaceId, kind, shopDomain, secret } = request;
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`crm-connection:${kind}:${shopDomain}`}, 0))`;
    const live = await tx.crmConnection.findFirst({
      where: { kind, shopDomain, deletedAt: null },
      select: { id: true, workspaceId: true },
    });
    if (live)
      throw new ConflictError(
        `${shopDomain} is already connected (connection ${live.id} of workspace ${live.workspaceId}); delete it first (DELETE /crm/connections/{id})`,
      );
    const id = randomUUID();
    const sealed = sealWebhookSecret(keyring, { workspaceId, id, kind, shopDomain }, secret);
    return tx.crmConnection.create({ data: { id, workspaceId, kind, shopDomain, ...sealed }, select: { id: true } });
  });
}
