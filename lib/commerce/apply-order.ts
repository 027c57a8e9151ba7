import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import type { Database } from '../database';
import { normalizeE164 } from '../phone';
import { isUniqueViolation } from '../prisma-errors';
import { attributeOrder } from './attribution';

/** The store topics that carry an order and change the workspace's commerce orders; any other is ignored here. */
export const ORDER_WEBHOOK_TOPICS = ['orders/create', 'orders/updated', 'orders/cancelled'] as const;

/** What an order without a fulfillment (Shopify's fulfillment_status null) is listed as. */
export const UNFULFILLED = 'unfulfilled';
/** What an order without a financial status is listed as (Shopify's default before any payment). */
export const NO_FINANCIAL_STATUS = 'pending';

/** An instant with its offset as the store writes it ("2026-11-25T10:30:00-05:00"), in years PostgreSQL stores. */
const storeTime = z.iso.datetime({ offset: true }).transform((value, ctx) => {
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (year < 1 || year > 9999) {
    ctx.addIssue({ code: 'custom', message: 'must fall in the years 0001 to 9999' });
    return z.NEVER;
  }
  return date;
});

const text = z.string().nullish();
const person = z.object({ first_name: text, last_name: text, name: text, phone: text }).nullish();

/** The fields of Shopify's order payload (REST Order resource) this service reads; the rest is ignored. */
const shopifyOrderSchema = z.object({
  id: z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,20}$/)]).transform(String),
  name: text,
  order_number: z.number().int().nullish(),
  currency: z.string().trim().min(1).check(atMostCodePoints(16)),
  total_price: z.string().trim().min(1).check(atMostCodePoints(64)),
  financial_status: text,
  fulfillment_status: text,
  created_at: storeTime,
  updated_at: storeTime.nullish(),
  cancelled_at: storeTime.nullish(),
  phone: text,
  customer: person,
  billing_address: person,
  shipping_address: person,
  landing_site: text,
  note_attributes: z
    .array(z.object({ name: z.string(), value: z.union([z.string(), z.number(), z.boolean()]).nullish() }))
    .nullish(),
});
type ShopifyOrder = z.infer<typeof shopifyOrderSchema>;

export interface OrderWebhookInput {
  connectionId: string;
  workspaceId: string;
  topic: string;
  payload: unknown;
}

/**
 * Applies one order webhook of a store connection (the receiver's durable processing calls it;
 * docs/features/commerce.md#orders-from-the-stores-webhooks-to-get-commerceorders). orders/create, orders/updated and
 * orders/cancelled upsert the order by (connectionId, externalOrderId = String(id)): the first of them to arrive
 * creates it (and its attribution, fixed from then on: lib/commerce/attribution.ts); a later one replaces the store's
 * fields unless its updated_at is older than the one last applied (a stale webhook changes nothing, except that a
 * cancellation it carries is still recorded when none is: Shopify never un-cancels an order). A cancellation is taken
 * only from a body carrying cancelled_at: Shopify signs the body, not the X-Shopify-Topic header, so an orders/create
 * body replayed under orders/cancelled must not cancel anything. orders/cancelled records the financial status it
 * gives like any update. Any other topic changes nothing:
 * { orderId: null, created: false }. A payload that is not an order throws an Error saying which fields are wrong, for
 * the caller to record as the processing error. Idempotent: the same webhook applied twice leaves the order as once.
 */
export async function applyOrderWebhook(
  db: Database,
  input: OrderWebhookInput,
): Promise<{ orderId: string | null; created: boolean }> {
  if (!(ORDER_WEBHOOK_TOPICS as readonly string[]).includes(input.topic)) return { orderId: null, created: false };
  const parsed = shopifyOrderSchema.safeParse(input.payload);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'payload'}: ${issue.message}`);
    throw new Error(`${input.topic} payload is not a Shopify order: ${problems.join('; ')}`);
  }
  const connection = await db.crmConnection.findFirst({
    where: { id: input.connectionId, workspaceId: input.workspaceId },
    select: { id: true },
  });
  if (!connection) throw new Error(`connection ${input.connectionId} is not one of workspace ${input.workspaceId}`);

  const order = orderFields(parsed.data);
  const key = { connectionId: input.connectionId, externalOrderId: parsed.data.id };
  const existing = await db.commerceOrder.findUnique({
    where: { connectionId_externalOrderId: key },
    select: { id: true },
  });
  if (existing) return { orderId: await updateOrder(db, existing.id, order), created: false };

  const attribution = await attributeOrder(db, {
    workspaceId: input.workspaceId,
    placedAt: order.placedAt,
    customerPhone: order.customerPhone,
    landingSite: storable(parsed.data.landing_site ?? null),
    noteAttributes: (parsed.data.note_attributes ?? []).map((attribute) => ({
      name: attribute.name,
      value: attribute.value == null ? null : storable(String(attribute.value)),
    })),
  });
  try {
    const created = await db.commerceOrder.create({
      data: { ...key, workspaceId: input.workspaceId, ...order, ...attribution },
      select: { id: true },
    });
    return { orderId: created.id, created: true };
  } catch (error) {
    // Another webhook of the same order created it meanwhile: this one is an update of it.
    if (!isUniqueViolation(error)) throw error;
    const raced = await db.commerceOrder.findUniqueOrThrow({ where: { connectionId_externalOrderId: key } });
    return { orderId: await updateOrder(db, raced.id, order), created: false };
  }
}

type OrderFields = ReturnType<typeof orderFields>;

/** The store's fields of the order, as stored (attribution aside). */
function orderFields(payload: ShopifyOrder) {
  // From the signed body only, never from the topic header (see applyOrderWebhook).
  const cancelledAt = payload.cancelled_at ?? null;
  return {
    orderNumber: storable(
      payload.name?.trim() || (payload.order_number != null ? `#${payload.order_number}` : payload.id),
    ),
    currency: storable(payload.currency),
    totalPrice: storable(payload.total_price),
    financialStatus: storable(payload.financial_status?.trim() || NO_FINANCIAL_STATUS),
    fulfillmentStatus: storable(payload.fulfillment_status?.trim() || UNFULFILLED),
    customerName: storable(customerName(payload)),
    customerPhone: customerPhone(payload),
    placedAt: payload.created_at,
    cancelledAt,
    storeUpdatedAt: payload.updated_at ?? payload.created_at,
  };
}

/** Applies a later webhook's fields unless it is older than the last one applied. */
async function updateOrder(db: Database, id: string, order: OrderFields): Promise<string> {
  const { count } = await db.commerceOrder.updateMany({
    where: { id, OR: [{ storeUpdatedAt: null }, { storeUpdatedAt: { lte: order.storeUpdatedAt } }] },
    data: order,
  });
  if (count === 0 && order.cancelledAt)
    await db.commerceOrder.updateMany({ where: { id, cancelledAt: null }, data: { cancelledAt: order.cancelledAt } });
  return id;
}

/** The customer's name, else the billing then the shipping address's; empty when the store gives none. */
function customerName(payload: ShopifyOrder): string {
  for (const who of [payload.customer, payload.billing_address, payload.shipping_address]) {
    const name =
      [who?.first_name, who?.last_name]
        .map((part) => part?.trim())
        .filter(Boolean)
        .join(' ') || who?.name?.trim();
    if (name) return name;
  }
  return '';
}

/**
 * The first valid E.164 phone of the customer, the order, the billing and the shipping address, in that
 * order; null when none is (lib/phone.ts reads only numbers written with their "+country" prefix).
 */
function customerPhone(payload: ShopifyOrder): string | null {
  for (const phone of [
    payload.customer?.phone,
    payload.phone,
    payload.billing_address?.phone,
    payload.shipping_address?.phone,
  ]) {
    const normalized = phone ? normalizeE164(phone) : null;
    if (normalized) return normalized;
  }
  return null;
}

const NUL = /\u0000/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text PostgreSQL can store: without NUL characters, unpaired surrogates replaced (the store's text is kept otherwise). */
function storable<T extends string | null>(value: T): T {
  return (value === null ? null : value.replace(NUL, '').replace(LONE_SURROGATE, '\uFFFD')) as T;
}
