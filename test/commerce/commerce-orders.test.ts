import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommerceOrder } from '../../generated/prisma/client';
import { applyOrderWebhook } from '../../lib/commerce/apply-order';
import { PHONE_ATTRIBUTION_WINDOW_DAYS } from '../../lib/commerce/attribution';
import { createApiKey } from '../../lib/door/workspace-admin';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });

const d2c = { features: ['d2c'] };
const shop = await createTestWorkspace(db, { scopes: ['sales.view'], settings: d2c });
const other = await createTestWorkspace(db, { scopes: ['sales.view'], settings: d2c });

const DAY_MS = 24 * 60 * 60 * 1000;

async function connect(workspace: TestWorkspace) {
  return db.crmConnection.create({
    data: {
      workspaceId: workspace.workspaceId,
      kind: 'shopify',
      shopDomain: `shop-${randomUUID().slice(0, 8)}.myshopify.com`,
      secret: 'shpss_test',
    },
  });
}
const connection = await connect(shop);
const otherConnection = await connect(other);

let nextOrder = 0;
/** An order as Shopify's orders/create webhook carries it (REST Order resource), trimmed to what a small shop sends. */
function shopifyOrder(overrides: Record<string, unknown> = {}) {
  nextOrder += 1;
  const id = 5_940_139_490_000 + nextOrder;
  const created = '2026-11-20T10:30:00-05:00';
  return {
    id,
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    name: `#${1000 + nextOrder}`,
    order_number: 1000 + nextOrder,
    email: 'ana@example.com',
    created_at: created,
    updated_at: created,
    processed_at: created,
    cancelled_at: null,
    cancel_reason: null,
    currency: 'EUR',
    presentment_currency: 'EUR',
    subtotal_price: '41.24',
    total_tax: '8.66',
    total_price: '49.90',
    financial_status: 'paid',
    fulfillment_status: null,
    confirmed: true,
    test: false,
    phone: null,
    landing_site: '/',
    referring_site: 'https://www.google.com/',
    source_name: 'web',
    note: null,
    note_attributes: [],
    tags: '',
    customer: {
      id: 7_001_000 + nextOrder,
      email: 'ana@example.com',
      first_name: 'Ana',
      last_name: 'García',
      phone: null,
      state: 'enabled',
    },
    billing_address: {
      first_name: 'Ana',
      last_name: 'García',
      address1: 'Calle Mayor 1',
      city: 'Madrid',
      zip: '28013',
      country_code: 'ES',
      phone: null,
      name: 'Ana García',
    },
    shipping_address: null,
    line_items: [{ id: 1, title: 'Serum', quantity: 1, price: '41.24', sku: 'SER-01', variant_id: 2 }],
    ...overrides,
  };
}

const apply = (payload: unknown, topic = 'orders/create', on = connection) =>
  applyOrderWebhook(db, { connectionId: on.id, workspaceId: on.workspaceId, topic, payload });

async function appliedOrder(payload: unknown, topic = 'orders/create', on = connection) {
  const result = await apply(payload, topic, on);
  return db.commerceOrder.findUniqueOrThrow({ where: { id: result.orderId! } });
}

async function campaignOf(workspace: TestWorkspace, fields: { deletedAt?: Date } = {}) {
  return db.campaign.create({ data: { workspaceId: workspace.workspaceId, name: 'Spring offer', ...fields } });
}

async function leadOf(campaign: { id: string; workspaceId: string }, phone: string) {
  const id = randomUUID();
  return db.lead.create({
    data: {
      id,
      workspaceId: campaign.workspaceId,
      campaignId: campaign.id,
      idempotencyKey: id,
      phone,
      workflowId: `lead-${id}`,
      requestId: randomUUID(),
    },
  });
}

/** A call of the lead ended at `endedAt` with `outcome`, as the dial ladder records it. */
async function callOf(lead: { id: string; workspaceId: string; campaignId: string }, outcome: string, endedAt: Date) {
  return db.call.create({
    data: {
      workspaceId: lead.workspaceId,
      campaignId: lead.campaignId,
      leadId: lead.id,
      toNumber: null,
      attempt: 1,
      attemptId: `${lead.id}:${randomUUID()}`,
      provider: 'simulated',
      status: 'ended',
      outcome,
      startedAt: new Date(endedAt.getTime() - 40_000),
      endedAt,
    },
  });
}

/** A campaign's WhatsApp template message to the lead, in `status` since `at`. */
async function messageOf(
  lead: { id: string; workspaceId: string; campaignId: string },
  status: 'sent' | 'delivered' | 'read' | 'failed',
  at: Date,
) {
  return db.whatsAppMessage.create({
    data: {
      workspaceId: lead.workspaceId,
      conversationId: randomUUID(),
      senderId: randomUUID(),
      direction: 'outbound',
      type: 'template',
      body: 'Your offer is waiting',
      status,
      providerMessageId: `wamid.${randomUUID()}`,
      campaignId: lead.campaignId,
      leadId: lead.id,
      createdAt: new Date(at.getTime() - 60_000),
      sentAt: new Date(at.getTime() - 30_000),
      deliveredAt: status === 'delivered' ? at : null,
      readAt: status === 'read' ? at : null,
    },
  });
}

const PLACED_AT = new Date('2026-11-20T15:30:00.000Z');
const daysBefore = (days: number) => new Date(PLACED_AT.getTime() - days * DAY_MS);

describe('applyOrderWebhook: orders from the store', () => {
  it('creates the order from orders/create with the store fields, its time and a phone in E.164', async () => {
    const payload = shopifyOrder({ customer: { first_name: 'Ana', last_name: 'García', phone: '+1 (415) 555-0131' } });
    const result = await apply(payload);
    expect(result).toEqual({ orderId: expect.any(String), created: true });
    const row = await db.commerceOrder.findUniqueOrThrow({ where: { id: result.orderId! } });
    expect(row).toMatchObject({
      workspaceId: shop.workspaceId,
      connectionId: connection.id,
      externalOrderId: String(payload.id),
      orderNumber: payload.name,
      currency: 'EUR',
      totalPrice: '49.90',
      financialStatus: 'paid',
      fulfillmentStatus: 'unfulfilled',
      customerName: 'Ana García',
      customerPhone: '+14155550131',
      placedAt: PLACED_AT,
      storeUpdatedAt: PLACED_AT,
      cancelledAt: null,
      attributedToService: false,
      attributedCampaignId: null,
      attributionMethod: null,
      utmSource: null,
      utmCampaign: null,
    });
    // The same webhook again (a redelivery, or orders/updated of the same state) changes nothing.
    expect(await apply(payload)).toEqual({ orderId: row.id, created: false });
    expect(await apply(payload, 'orders/updated')).toEqual({ orderId: row.id, created: false });
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: row.id } })).toEqual(
      expect.objectContaining({ ...row, updatedAt: expect.any(Date) }),
    );
    expect(await db.commerceOrder.count({ where: { externalOrderId: String(payload.id) } })).toBe(1);
  });

  it('applies a newer orders/updated and never lets an older one overwrite it', async () => {
    const payload = shopifyOrder();
    const { orderId } = await apply(payload);
    const newer = {
      ...payload,
      updated_at: '2026-11-21T09:00:00+01:00',
      fulfillment_status: 'fulfilled',
      total_price: '44.90',
    };
    expect(await apply(newer, 'orders/updated')).toEqual({ orderId, created: false });
    const older = { ...payload, updated_at: '2026-11-20T12:00:00-05:00', financial_status: 'pending' };
    expect(await apply(older, 'orders/updated')).toEqual({ orderId, created: false });
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: orderId! } })).toMatchObject({
      fulfillmentStatus: 'fulfilled',
      financialStatus: 'paid',
      totalPrice: '44.90',
      storeUpdatedAt: new Date('2026-11-21T08:00:00.000Z'),
    });
  });

  it('creates the order from whichever order topic arrives first (an update before its create)', async () => {
    const payload = shopifyOrder({ updated_at: '2026-11-20T11:00:00-05:00', fulfillment_status: 'partial' });
    expect(await apply(payload, 'orders/updated')).toMatchObject({ created: true });
    const { orderId } = await apply({ ...payload, updated_at: payload.created_at, fulfillment_status: null });
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: orderId! } })).toMatchObject({
      fulfillmentStatus: 'partial',
    });
  });

  it('records a cancellation and the financial status orders/cancelled gives, even from a stale webhook', async () => {
    const payload = shopifyOrder();
    const { orderId } = await apply(payload);
    const cancelled = {
      ...payload,
      updated_at: '2026-11-22T10:00:00Z',
      cancelled_at: '2026-11-22T10:00:00Z',
      cancel_reason: 'customer',
      financial_status: 'voided',
    };
    expect(await apply(cancelled, 'orders/cancelled')).toEqual({ orderId, created: false });
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: orderId! } })).toMatchObject({
      cancelledAt: new Date('2026-11-22T10:00:00Z'),
      financialStatus: 'voided',
    });

    // A cancellation whose updated_at is older than the last applied still records the cancellation, nothing else.
    const second = shopifyOrder();
    const { orderId: secondId } = await apply({
      ...second,
      updated_at: '2026-11-23T10:00:00Z',
      financial_status: 'paid',
    });
    await apply(
      {
        ...second,
        updated_at: '2026-11-22T10:00:00Z',
        cancelled_at: '2026-11-22T10:00:00Z',
        financial_status: 'refunded',
      },
      'orders/cancelled',
    );
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: secondId! } })).toMatchObject({
      cancelledAt: new Date('2026-11-22T10:00:00Z'),
      financialStatus: 'paid',
    });
  });

  it('takes a cancellation only from a body carrying cancelled_at: an orders/create body under orders/cancelled cancels nothing', async () => {
    // Shopify signs the body, not X-Shopify-Topic: a captured orders/create body replayed under orders/cancelled.
    const payload = shopifyOrder({ cancelled_at: null });
    const { orderId } = await apply(payload);
    expect(await apply(payload, 'orders/cancelled')).toEqual({ orderId, created: false });
    expect(await apply({ ...payload, updated_at: new Date().toISOString() }, 'orders/cancelled')).toEqual({
      orderId,
      created: false,
    });
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: orderId! } })).toMatchObject({ cancelledAt: null });
    // First seen under orders/cancelled, without cancelled_at: created, not cancelled.
    const fresh = shopifyOrder({ cancelled_at: null });
    const { orderId: freshId } = await apply(fresh, 'orders/cancelled');
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: freshId! } })).toMatchObject({ cancelledAt: null });
  });

  it('throws a clear error for a payload that is not an order, and stores nothing', async () => {
    const before = await db.commerceOrder.count();
    const product = { id: 632910392, title: 'IPod Nano - 8GB', body_html: '<p>It is the small iPod</p>', variants: [] };
    await expect(apply(product)).rejects.toThrow(/^orders\/create payload is not a Shopify order: .*currency/);
    await expect(apply('not json object')).rejects.toThrow(/not a Shopify order/);
    await expect(apply(shopifyOrder({ created_at: 'yesterday' }))).rejects.toThrow(/created_at/);
    await expect(apply(shopifyOrder({ total_price: 49.9 }))).rejects.toThrow(/total_price/);
    expect(await db.commerceOrder.count()).toBe(before);
  });

  it('ignores topics other than the order topics, and refuses a connection of another workspace', async () => {
    expect(await apply(shopifyOrder(), 'products/create')).toEqual({ orderId: null, created: false });
    await expect(
      applyOrderWebhook(db, {
        connectionId: otherConnection.id,
        workspaceId: shop.workspaceId,
        topic: 'orders/create',
        payload: shopifyOrder(),
      }),
    ).rejects.toThrow(/is not one of workspace/);
  });

  it('keeps the first valid E.164 phone of the customer, the order, the addresses; null when none is', async () => {
    const fromBilling = await appliedOrder(
      shopifyOrder({
        customer: { first_name: 'Li', last_name: null, phone: '415 555 0132' },
        phone: 'n/a',
        billing_address: { name: 'Li Wei', phone: '+1 415-555-0133' },
      }),
    );
    expect(fromBilling).toMatchObject({ customerPhone: '+14155550133', customerName: 'Li' });
    const none = await appliedOrder(
      shopifyOrder({ customer: null, billing_address: { name: 'Guest Buyer', phone: '+999 1' } }),
    );
    expect(none).toMatchObject({ customerPhone: null, customerName: 'Guest Buyer' });
  });
});

const campaign = await campaignOf(shop);
const later = await campaignOf(shop);
const deleted = await campaignOf(shop, { deletedAt: new Date('2026-11-01T00:00:00Z') });
const foreign = await campaignOf(other);

describe('applyOrderWebhook: attribution', () => {
  it('attributes by utm_campaign of the landing site naming a campaign of the workspace, utm_source as found', async () => {
    const order = await appliedOrder(
      shopifyOrder({
        landing_site: `/products/serum?utm_source=outbound-ai&utm_medium=whatsapp&utm_campaign=${campaign.id}`,
      }),
    );
    expect(order).toMatchObject({
      attributedToService: true,
      attributedCampaignId: campaign.id,
      attributionMethod: 'utm',
      utmSource: 'outbound-ai',
      utmCampaign: campaign.id,
    });
    const absolute = await appliedOrder(
      shopifyOrder({
        landing_site: `https://shop.example/?utm_campaign=spring-offer--${campaign.id.toUpperCase()}&utm_source=newsletter`,
      }),
    );
    expect(absolute).toMatchObject({
      attributedCampaignId: campaign.id,
      attributionMethod: 'utm',
      utmSource: 'newsletter',
    });
  });

  it('reads utm parameters from the note attributes before the landing site', async () => {
    const order = await appliedOrder(
      shopifyOrder({
        landing_site: `/?utm_source=outbound-ai&utm_campaign=${campaign.id}`,
        note_attributes: [
          { name: 'gift_wrap', value: 'yes' },
          { name: 'UTM_Campaign', value: `spring-offer--${later.id}` },
        ],
      }),
    );
    expect(order).toMatchObject({
      attributedCampaignId: later.id,
      attributionMethod: 'utm',
      utmSource: 'outbound-ai',
      utmCampaign: `spring-offer--${later.id}`,
    });
  });

  it("does not attribute by another workspace's campaign, a deleted one or an id in no documented scheme", async () => {
    for (const utmCampaign of [foreign.id, deleted.id, `summer${campaign.id}`, randomUUID(), 'spring-offer']) {
      const order = await appliedOrder(
        shopifyOrder({ landing_site: `/?utm_source=outbound-ai&utm_campaign=${utmCampaign}` }),
      );
      expect(order, utmCampaign).toMatchObject({
        attributedToService: false,
        attributedCampaignId: null,
        attributionMethod: null,
        utmSource: 'outbound-ai',
        utmCampaign,
      });
    }
  });

  it('attributes by the phone of a lead a campaign reached within the window, to the latest such campaign', async () => {
    const phone = '+14155550141';
    await callOf(await leadOf(campaign, phone), 'answered', daysBefore(10));
    await messageOf(await leadOf(later, phone), 'delivered', daysBefore(2));
    const order = await appliedOrder(shopifyOrder({ customer: { first_name: 'Ana', phone: '+1 415 555 0141' } }));
    expect(order).toMatchObject({
      attributedToService: true,
      attributedCampaignId: later.id,
      attributionMethod: 'phone',
      utmSource: null,
      utmCampaign: null,
    });

    const voicemail = '+14155550142';
    await messageOf(await leadOf(later, voicemail), 'read', daysBefore(20));
    await callOf(await leadOf(campaign, voicemail), 'voicemail', daysBefore(PHONE_ATTRIBUTION_WINDOW_DAYS - 1));
    await callOf(await leadOf(campaign, voicemail), 'no_answer', daysBefore(1));
    expect(await appliedOrder(shopifyOrder({ phone: voicemail }))).toMatchObject({
      attributedCampaignId: later.id,
      attributionMethod: 'phone',
    });
  });

  it('attributes by UTM before the phone', async () => {
    const phone = '+14155550143';
    await callOf(await leadOf(campaign, phone), 'answered', daysBefore(1));
    expect(await appliedOrder(shopifyOrder({ phone, landing_site: `/?utm_campaign=${later.id}` }))).toMatchObject({
      attributedCampaignId: later.id,
      attributionMethod: 'utm',
    });
  });

  it('does not attribute by a phone reached outside the window, never reached, or only by a deleted or foreign campaign', async () => {
    const outside = '+14155550144';
    await callOf(await leadOf(campaign, outside), 'answered', daysBefore(PHONE_ATTRIBUTION_WINDOW_DAYS + 1));
    await messageOf(await leadOf(campaign, outside), 'delivered', new Date(PLACED_AT.getTime() + 60_000));
    const neverReached = '+14155550145';
    await callOf(await leadOf(campaign, neverReached), 'no_answer', daysBefore(1));
    await callOf(await leadOf(campaign, neverReached), 'busy', daysBefore(2));
    await messageOf(await leadOf(later, neverReached), 'sent', daysBefore(1));
    await messageOf(await leadOf(later, neverReached), 'failed', daysBefore(1));
    const deletedOnly = '+14155550146';
    await callOf(await leadOf(deleted, deletedOnly), 'answered', daysBefore(1));
    const foreignOnly = '+14155550147';
    await callOf(await leadOf(foreign, foreignOnly), 'answered', daysBefore(1));
    const noLead = '+14155550148';
    for (const phone of [outside, neverReached, deletedOnly, foreignOnly, noLead]) {
      expect(await appliedOrder(shopifyOrder({ phone })), phone).toMatchObject({
        customerPhone: phone,
        attributedToService: false,
        attributedCampaignId: null,
        attributionMethod: null,
      });
    }
  });

  it('fixes the attribution when the order is created: later webhooks do not change it', async () => {
    const payload = shopifyOrder({ landing_site: '/?utm_source=instagram' });
    const { orderId } = await apply(payload);
    await apply(
      {
        ...payload,
        updated_at: '2026-11-25T00:00:00Z',
        note_attributes: [{ name: 'utm_campaign', value: campaign.id }],
      },
      'orders/updated',
    );
    expect(await db.commerceOrder.findUniqueOrThrow({ where: { id: orderId! } })).toMatchObject({
      attributedToService: false,
      attributedCampaignId: null,
      utmSource: 'instagram',
      utmCampaign: null,
      storeUpdatedAt: new Date('2026-11-25T00:00:00Z'),
    });
  });
});

const lister = await createTestWorkspace(db, { scopes: ['sales.view'], settings: d2c });
const store = await connect(lister);
const listed = await campaignOf(lister);
// Five orders an hour apart, the 2nd and 4th attributed; two placed at the same time (ties broken by id).
const seeded: CommerceOrder[] = [];
for (const [index, hour] of [8, 9, 10, 11, 11].entries()) {
  const attributed = index === 1 || index === 3;
  const { orderId } = await apply(
    shopifyOrder({
      created_at: `2026-11-24T${String(hour).padStart(2, '0')}:00:00Z`,
      updated_at: `2026-11-24T${String(hour).padStart(2, '0')}:00:00Z`,
      landing_site: attributed ? `/?utm_source=outbound-ai&utm_campaign=${listed.id}` : '/?utm_source=google',
      fulfillment_status: index === 0 ? 'fulfilled' : null,
    }),
    'orders/create',
    store,
  );
  seeded.push(await db.commerceOrder.findUniqueOrThrow({ where: { id: orderId! } }));
}
const newestFirst = [...seeded].sort(
  (a, b) => b.placedAt.getTime() - a.placedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
);
const ids = (body: { items: Array<{ id: string }> }) => body.items.map((item) => item.id);

describe('GET /commerce/orders', () => {
  async function list(query: string, key = lister.key) {
    const response = await api.request('GET', `/commerce/orders${query}`, { key });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  it('answers exactly the spec fields, newest first, with the total; only the workspace orders', async () => {
    const { status, body } = await list('');
    expect(status).toBe(200);
    expect(body.total).toBe(5);
    expect(ids(body as never)).toEqual(newestFirst.map((order) => order.id));
    const oldest = seeded[0]!;
    expect(body.items.at(-1)).toEqual({
      id: oldest.id,
      externalOrderId: oldest.externalOrderId,
      orderNumber: oldest.orderNumber,
      currency: 'EUR',
      totalPrice: '49.90',
      financialStatus: 'paid',
      fulfillmentStatus: 'fulfilled',
      customerName: 'Ana García',
      placedAt: '2026-11-24T08:00:00.000Z',
      attributedToService: false,
      attributedCampaignId: null,
      utmSource: 'google',
      utmCampaign: null,
    });
    expect(body.items.find((item: { id: string }) => item.id === seeded[1]!.id)).toMatchObject({
      attributedToService: true,
      attributedCampaignId: listed.id,
      utmSource: 'outbound-ai',
      utmCampaign: listed.id,
    });
  });

  it('pages by page (1-based) and limit', async () => {
    const pages = await Promise.all(
      ['?page=1&limit=2', '?page=2&limit=2', '?limit=2&page=3', '?page=4&limit=2'].map((q) => list(q)),
    );
    expect(pages.map((page) => page.status)).toEqual([200, 200, 200, 200]);
    expect(pages.map((page) => page.body.total)).toEqual([5, 5, 5, 5]);
    expect(pages.flatMap((page) => ids(page.body as never))).toEqual(newestFirst.map((order) => order.id));
    expect(pages.map((page) => page.body.items.length)).toEqual([2, 2, 1, 0]);
    expect(ids((await list('?limit=200')).body as never)).toHaveLength(5);
    expect(ids((await list('?page=1&limit=1')).body as never)).toEqual([newestFirst[0]!.id]);
  });

  it('filters with attributed=true or false; absent, all', async () => {
    const attributed = await list('?attributed=true');
    expect(attributed.body.total).toBe(2);
    expect(ids(attributed.body as never)).toEqual([seeded[3]!.id, seeded[1]!.id]);
    const others = await list('?attributed=false&limit=2&page=2');
    expect(others.body.total).toBe(3);
    expect(ids(others.body as never)).toEqual([seeded[0]!.id]);
  });

  it('refuses a bad query with 400 invalid_body', async () => {
    for (const query of [
      '?page=0',
      '?page=-1',
      '?page=1.5',
      '?page=abc',
      '?limit=0',
      '?limit=201',
      '?limit=',
      '?attributed=yes',
      '?attributed=1',
    ]) {
      const { status, body } = await list(query);
      expect(status, query).toBe(400);
      expect(body.error, query).toBe('invalid_body');
    }
  });

  it('refuses a workspace without the d2c feature, a key without sales.view, a key without scopes', async () => {
    const noD2c = await createTestWorkspace(db, { scopes: ['sales.view'] });
    expect(await list('', noD2c.key)).toEqual({
      status: 403,
      body: expect.objectContaining({ error: 'feature_not_enabled', requiredFeature: 'd2c' }),
    });
    const noScope = await createTestWorkspace(db, { scopes: ['campaigns.view', 'crm.view'], settings: d2c });
    expect(await list('', noScope.key)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'sales.view' },
    });
    const unscoped = await createApiKey(db, lister.memberId, {});
    expect(await list('', unscoped.key)).toMatchObject({ status: 403, body: { error: 'api_key_not_scoped' } });
    // Another workspace's orders are its own.
    const { body } = await list('', other.key);
    expect(body.items.every((item: { id: string }) => !seeded.some((order) => order.id === item.id))).toBe(true);
  });
});
