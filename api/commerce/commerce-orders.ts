import type { CommerceOrder } from '../../generated/prisma/client';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { ordersOfWorkspacePage } from './commerce-store';

export interface CommerceOrderQuery {
  page: number;
  limit: number;
  /** true: attributed orders only; false: the others; undefined: all. */
  attributed?: boolean;
}

/** An order as GET /commerce/orders lists it: exactly the spec's fields. */
export function commerceOrderView(order: CommerceOrder) {
  return {
    id: order.id,
    externalOrderId: order.externalOrderId,
    orderNumber: order.orderNumber,
    currency: order.currency,
    totalPrice: order.totalPrice,
    financialStatus: order.financialStatus,
    fulfillmentStatus: order.fulfillmentStatus,
    customerName: order.customerName,
    placedAt: order.placedAt.toISOString(),
    attributedToService: order.attributedToService,
    attributedCampaignId: order.attributedCampaignId,
    utmSource: order.utmSource,
    utmCampaign: order.utmCampaign,
  };
}

/** The workspace's orders, newest placed first (placedAt, then id, descending), one page of them and their total. */
export async function listCommerceOrders({ db }: AppServices, principal: Principal, query: CommerceOrderQuery) {
  const { rows, total } = await ordersOfWorkspacePage(db, principal.workspaceId, query);
  return { items: rows.map(commerceOrderView), total };
}
