import { crmWebhookPath } from '../../lib/crm/connections';
import { CRM_DELIVERIES_KEPT } from '../../lib/crm/deliveries';
import type { PayloadShape } from '../../lib/crm/payload-shape';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import {
  latestDeliveriesOf,
  liveConnectionsOfWorkspace,
  liveConnectionWhere,
  markConnectionDeleted,
} from './crm-store';

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
  const connections = await liveConnectionsOfWorkspace(db, principal.workspaceId);
  return connections.map(connectionView);
}

/** A live connection of the caller's workspace; unknown, deleted and another workspace's are the same 403. */
export const findOwnedConnection = ({ db }: AppServices, principal: Principal, id: string) =>
  findOwned(principal, id, (where) => liveConnectionWhere(db, where));

export async function getCrmConnection(services: AppServices, principal: Principal, id: string) {
  return connectionView(await findOwnedConnection(services, principal, id));
}

/**
 * Gone from the API, its receiver answering 404 from then on; its orders and deliveries are kept, its Admin API token
 * and its webhook signing secret wiped (a removed connection's secrets are not kept).
 */
export async function deleteCrmConnection(services: AppServices, principal: Principal, id: string) {
  await findOwnedConnection(services, principal, id);
  await markConnectionDeleted(services.db, id);
}

/** The connection's latest deliveries (at most CRM_DELIVERIES_KEPT), newest first, as shapes: never a value. */
export async function listCrmDeliveries(services: AppServices, principal: Principal, id: string) {
  await findOwnedConnection(services, principal, id);
  const deliveries = await latestDeliveriesOf(services.db, id, CRM_DELIVERIES_KEPT);
  return {
    deliveries: deliveries.map((delivery) => ({
      ...delivery,
      receivedAt: delivery.receivedAt.toISOString(),
      shape: delivery.shape as PayloadShape,
    })),
  };
}
