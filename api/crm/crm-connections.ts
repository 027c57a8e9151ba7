import { crmWebhookPath } from '../../lib/crm/connections';
import { CRM_DELIVERIES_KEPT } from '../../lib/crm/deliveries';
import type { PayloadShape } from '../../lib/crm/payload-shape';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { WIPED_ENVELOPE } from '../../lib/secrets/sealed-rows';
import { WIPED_WEBHOOK_SECRET } from '../../lib/crm/webhook-secret';

/** What the API shows of a connection: never its secret, nor its Admin API token (only whether it holds one). */
const CONNECTION_FIELDS = {
  id: true,
  kind: true,
  shopDomain: true,
  createdAt: true,
  adminProvider: true,
  adminTokenSetAt: true,
} as const;

function connectionView(connection: {
  id: string;
  kind: string;
  shopDomain: string;
  createdAt: Date;
  adminProvider: string | null;
  adminTokenSetAt: Date | null;
}) {
  return {
    id: connection.id,
    kind: connection.kind,
    shopDomain: connection.shopDomain,
    webhookPath: crmWebhookPath(connection.id),
    createdAt: connection.createdAt.toISOString(),
    adminApi:
      connection.adminProvider && connection.adminTokenSetAt
        ? { provider: connection.adminProvider, tokenSetAt: connection.adminTokenSetAt.toISOString() }
        : null,
  };
}

/** The workspace's live connections, all at once, newest first. */
export async function listCrmConnections({ db }: AppServices, principal: Principal) {
  const connections = await db.crmConnection.findMany({
    where: { workspaceId: principal.workspaceId, deletedAt: null },
    select: CONNECTION_FIELDS,
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
  return connections.map(connectionView);
}

/** A live connection of the caller's workspace; unknown, deleted and another workspace's are the same 403. */
export const findOwnedConnection = ({ db }: AppServices, principal: Principal, id: string) =>
  findOwned(principal, id, (where) =>
    db.crmConnection.findFirst({ where: { ...where, deletedAt: null }, select: CONNECTION_FIELDS }),
  );

export async function getCrmConnection(services: AppServices, principal: Principal, id: string) {
  return connectionView(await findOwnedConnection(services, principal, id));
}

/**
 * Gone from the API, its receiver answering 404 from then on; its orders and deliveries are kept, its Admin API token
 * and its webhook signing secret wiped (a removed connection's secrets are not kept).
 */
export async function deleteCrmConnection(services: AppServices, principal: Principal, id: string) {
  await findOwnedConnection(services, principal, id);
  await services.db.crmConnection.updateMany({
    where: { id, deletedAt: null },
    data: { deletedAt: new Date(), ...WIPED_ENVELOPE, ...WIPED_WEBHOOK_SECRET },
  });
}

/** The connection's latest deliveries (at most CRM_DELIVERIES_KEPT), newest first, as shapes: never a value. */
export async function listCrmDeliveries(services: AppServices, principal: Principal, id: string) {
  await findOwnedConnection(services, principal, id);
  const deliveries = await services.db.crmWebhookDelivery.findMany({
    where: { connectionId: id },
    orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
    take: CRM_DELIVERIES_KEPT,
    select: { id: true, receivedAt: true, status: true, topic: true, processingError: true, shape: true },
  });
  return {
    deliveries: deliveries.map((delivery) => ({
      ...delivery,
      receivedAt: delivery.receivedAt.toISOString(),
      shape: delivery.shape as PayloadShape,
    })),
  };
}
