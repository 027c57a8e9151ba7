import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { setCrmAdminToken } from '../../lib/crm/admin-token';
import { connectCrm } from '../../lib/crm/connections';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { trimCrmDeliveries } from '../../lib/crm/deliveries';
import { startStalledCrmDeliveries } from '../../worker/crm-delivery-sweep';
import { payloadShape, SHAPE_MAX_DEPTH, SHAPE_MAX_KEYS } from '../../lib/crm/payload-shape';
import { signShopifyWebhook } from '../../lib/crm/shopify-webhook';
import { sealingAdminCli } from '../support/admin-cli';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startTestWorker, unreachableTemporal, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { TEST_KEYRING, TEST_SECRETS_KEYS } from '../support/keyring';
import { WEBHOOK_SECRET_COLUMNS, webhookSecretOf } from '../../lib/crm/webhook-secret';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, { db, ...carrierDependencies(await startTestCarrier(db), api) });
const CRM_SCOPES = ['crm.view', 'crm.edit', 'crm.delete'];
const owner = await createTestWorkspace(db, { scopes: CRM_SCOPES });
const other = await createTestWorkspace(db, { scopes: CRM_SCOPES });

const SECRET = 'shpss_test_secret_0123456789';
let shops = 0;
const newShop = () => `shop-${Date.now().toString(36)}-${shops++}.myshopify.com`;

async function connection(workspaceId = owner.workspaceId, shop = newShop()) {
  const { id } = await connectCrm(db, TEST_KEYRING, { workspaceId, kind: 'shopify', shopDomain: shop, secret: SECRET });
  return { id, shop };
}

interface Delivery {
  id: string;
  receivedAt: string;
  status: string;
  topic: string;
  processingError: string | null;
  shape: Record<string, unknown>;
}

function order(overrides: Record<string, unknown> = {}) {
  const now = new Date().toISOString();
  return {
    id: Math.floor(Math.random() * 1e12),
    name: '#1001',
    order_number: 1001,
    currency: 'EUR',
    total_price: '49.90',
    financial_status: 'paid',
    fulfillment_status: null,
    created_at: now,
    updated_at: now,
    phone: null,
    customer: { first_name: 'Ada', last_name: 'Lovelace', phone: null },
    line_items: [{ title: 'Tea', quantity: 2, price: '24.95' }],
    ...overrides,
  };
}

async function deliver(
  target: { id: string; shop: string },
  payload: unknown,
  options: { topic?: string; eventId?: string; signature?: string | null; shop?: string; secret?: string } = {},
) {
  const raw = JSON.stringify(payload);
  const signature =
    options.signature === undefined ? signShopifyWebhook(raw, options.secret ?? SECRET) : options.signature;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': options.topic ?? 'orders/create',
    'x-shopify-shop-domain': options.shop ?? target.shop,
    'x-shopify-event-id': options.eventId ?? randomUUID(),
  };
  if (signature !== null) headers['x-shopify-hmac-sha256'] = signature;
  return api.request('POST', `/crm/connections/${target.id}/webhooks`, { body: raw, headers });
}

async function deliveries(connectionId: string, key = owner.key) {
  const response = await api.request('GET', `/crm/connections/${connectionId}/deliveries`, { key });
  expect(response.status).toBe(200);
  return ((await response.json()) as { deliveries: Delivery[] }).deliveries;
}

const settled = async (connectionId: string, deliveryId: string): Promise<Delivery> =>
  (await until(
    async () => (await deliveries(connectionId)).find((delivery) => delivery.id === deliveryId),
    (found) => found !== undefined && found.status !== 'received',
  ))!;

describe('POST /crm/connections/{id}/webhooks: signatures and shops', () => {
  it('takes a signed order, answers at once and applies it after the answer: the order exists, the delivery processed', async () => {
    const target = await connection();
    const payload = order();
    const response = await deliver(target, payload);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { received: true; deliveryId: string; duplicate: boolean };
    expect(body).toMatchObject({ received: true, duplicate: false });
    const delivery = await settled(target.id, body.deliveryId);
    expect(delivery).toMatchObject({ status: 'processed', topic: 'orders/create', processingError: null });
    const stored = await db.crmWebhookDelivery.findUniqueOrThrow({ where: { id: body.deliveryId } });
    expect(stored.payload).toBeNull();
    expect(stored.processedAt).not.toBeNull();
    const orders = await db.commerceOrder.findMany({ where: { connectionId: target.id } });
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ externalOrderId: String(payload.id), totalPrice: '49.90' });
  });

  it("refuses a bad, a missing or another secret's signature, and another shop: 401, nothing kept", async () => {
    const target = await connection();
    const payload = order();
    const refusals = [
      await deliver(target, payload, { signature: 'bm90IGEgc2lnbmF0dXJl', topic: 'orders/create' }),
      await deliver(target, payload, { signature: null, topic: 'orders/updated' }),
      await deliver(target, payload, { secret: 'another-secret', topic: 'orders/cancelled' }),
      await deliver(target, payload, { shop: 'someone-else.myshopify.com', topic: 'orders/create' }),
    ];
    for (const response of refusals) {
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ error: 'invalid_signature' });
    }
    expect(await deliveries(target.id)).toEqual([]);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(0);
    expect(await db.commerceOrder.count({ where: { connectionId: target.id } })).toBe(0);
  });

  it('answers 404 for an unknown or deleted connection, storing nothing', async () => {
    const target = await connection();
    expect((await deliver({ ...target, id: randomUUID() }, order())).status).toBe(404);
    expect((await deliver({ ...target, id: 'not-a-uuid' }, order())).status).toBe(404);
    const removed = await api.request('DELETE', `/crm/connections/${target.id}`, { key: owner.key });
    expect(removed.status).toBe(204);
    const after = await deliver(target, order());
    expect(after.status).toBe(404);
    // Removed, its signing secret is not kept, sealed or clear.
    expect(await db.crmConnection.findUniqueOrThrow({ where: { id: target.id } })).toMatchObject({
      secret: null,
      webhookSecretKeyId: null,
      webhookSecretCiphertext: null,
    });
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(0);
  });

  it('treats a redelivery of an event id as the same delivery: 200, nothing changes twice', async () => {
    const target = await connection();
    const eventId = randomUUID();
    const payload = order();
    const first = (await (await deliver(target, payload, { eventId })).json()) as { deliveryId: string };
    await settled(target.id, first.deliveryId);
    const again = await deliver(target, { ...payload, total_price: '1.00' }, { eventId });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ received: true, deliveryId: first.deliveryId, duplicate: true });
    // The X-Shopify-Webhook-Id of older deliveries works as well.
    const byWebhookId = randomUUID();
    const raw = JSON.stringify(order());
    const headers = {
      'x-shopify-hmac-sha256': signShopifyWebhook(raw, SECRET),
      'x-shopify-topic': 'app/uninstalled',
      'x-shopify-shop-domain': target.shop,
      'x-shopify-webhook-id': byWebhookId,
    };
    const path = `/crm/connections/${target.id}/webhooks`;
    const once = (await (await api.request('POST', path, { body: raw, headers })).json()) as { deliveryId: string };
    const twice = (await (await api.request('POST', path, { body: raw, headers })).json()) as { duplicate: boolean };
    expect(twice.duplicate).toBe(true);
    await settled(target.id, once.deliveryId);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(2);
    const [stored] = await db.commerceOrder.findMany({ where: { connectionId: target.id } });
    expect(stored!.totalPrice).toBe('49.90');
  });

  it('records another topic and ignores it, its payload dropped', async () => {
    const target = await connection();
    const response = await deliver(target, { id: 1, name: 'Tea' }, { topic: 'products/update' });
    const { deliveryId } = (await response.json()) as { deliveryId: string };
    expect(await settled(target.id, deliveryId)).toMatchObject({ status: 'ignored', topic: 'products/update' });
    expect((await db.crmWebhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).payload).toBeNull();
    expect(await db.commerceOrder.count({ where: { connectionId: target.id } })).toBe(0);
  });

  it('marks failed, with the reason and its payload kept, an order payload that cannot be applied', async () => {
    const target = await connection();
    const response = await deliver(target, { id: 'not an order' });
    const { deliveryId } = (await response.json()) as { deliveryId: string };
    const delivery = await settled(target.id, deliveryId);
    expect(delivery.status).toBe('failed');
    expect(delivery.processingError).toMatch(/orders\/create/);
    expect((await db.crmWebhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).payload).toEqual({
      id: 'not an order',
    });
  });

  it('keeps a delivery received while Temporal is unreachable; the sweep starts it later', async () => {
    const down = await startTestApi({ db, url, temporal: await unreachableTemporal(temporal.taskQueue) });
    const target = await connection();
    const raw = JSON.stringify(order());
    const response = await down.request('POST', `/crm/connections/${target.id}/webhooks`, {
      body: raw,
      headers: {
        'x-shopify-hmac-sha256': signShopifyWebhook(raw, SECRET),
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': target.shop,
        'x-shopify-event-id': randomUUID(),
      },
    });
    expect(response.status).toBe(200);
    const { deliveryId } = (await response.json()) as { deliveryId: string };
    expect((await db.crmWebhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } })).status).toBe('received');
    expect(await startStalledCrmDeliveries(db, temporal.client, temporal.taskQueue, 0)).toBeGreaterThanOrEqual(1);
    expect((await settled(target.id, deliveryId)).status).toBe('processed');
  });
});

describe('public webhooks: throttled, verified before they are parsed', () => {
  const unsigned = (target: { id: string; shop: string }, on = api) =>
    on.request('POST', `/crm/connections/${target.id}/webhooks`, {
      body: JSON.stringify(order()),
      headers: { 'x-shopify-topic': 'orders/cancelled', 'x-shopify-shop-domain': target.shop },
    });

  it('answers an unsigned flood from one address 401, then 429 with Retry-After, and writes no row', async () => {
    const PER_ADDRESS = 5;
    const throttled = await startTestApi({
      db,
      url,
      temporal,
      webhookRateLimits: { perAddress: PER_ADDRESS, perConnection: 10_000 },
    });
    const target = await connection();
    const statuses: number[] = [];
    let last: Response | undefined;
    // The address's bucket may already hold this file's earlier requests: the flood meets the limit by PER_ADDRESS + 1.
    for (let sent = 0; sent <= PER_ADDRESS; sent++) {
      last = await unsigned(target, throttled);
      statuses.push(last.status);
    }
    expect(
      statuses.every((status) => status === 401 || status === 429),
      statuses.join(),
    ).toBe(true);
    expect(last!.status).toBe(429);
    expect(await last!.json()).toMatchObject({ error: 'rate_limited' });
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(0);
  });

  it("stops a flood spread over addresses at the connection's share: 429 past it, no row", async () => {
    const PER_CONNECTION = 3;
    const throttled = await startTestApi({
      db,
      url,
      temporal,
      webhookRateLimits: { perAddress: 10_000, perConnection: PER_CONNECTION },
    });
    const target = await connection();
    const statuses: number[] = [];
    for (let sent = 0; sent <= PER_CONNECTION; sent++) statuses.push((await unsigned(target, throttled)).status);
    expect(statuses).toEqual([...Array<number>(PER_CONNECTION).fill(401), 429]);
    // Another connection's share is its own.
    expect((await unsigned(await connection(), throttled)).status).toBe(401);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(0);
  });

  it('checks the signature before it parses: an unsigned body that is not JSON is 401, not 400', async () => {
    const target = await connection();
    const response = await api.request('POST', `/crm/connections/${target.id}/webhooks`, {
      body: '{"not json',
      headers: { 'x-shopify-topic': 'orders/create', 'x-shopify-shop-domain': target.shop },
    });
    expect(response.status).toBe(401);
    // Signed, the same body is parsed, and refused as not JSON; nothing is written either way.
    const signed = await api.request('POST', `/crm/connections/${target.id}/webhooks`, {
      body: '{"not json',
      headers: {
        'x-shopify-hmac-sha256': signShopifyWebhook('{"not json', SECRET),
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': target.shop,
      },
    });
    expect(signed.status).toBe(400);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(0);
  });

  it('refuses a body over the cap (413) before reading it as JSON, signed or not, and writes no row', async () => {
    const target = await connection();
    const CAP = 1024 * 1024;
    // Not JSON at all: a 413 rather than a 400 shows nothing parsed it.
    const over = 'x'.repeat(CAP + 1);
    for (const signature of [undefined, signShopifyWebhook(over, SECRET)]) {
      const headers: Record<string, string> = {
        'x-shopify-topic': 'orders/create',
        'x-shopify-shop-domain': target.shop,
      };
      if (signature) headers['x-shopify-hmac-sha256'] = signature;
      const response = await api.request('POST', `/crm/connections/${target.id}/webhooks`, { body: over, headers });
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({ error: 'internal_error', detail: 'request body is over 1 MB' });
    }
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(0);

    // A carrier's status event is held to 64 KiB.
    const event = 'x'.repeat(64 * 1024 + 1);
    const carrier = await api.request('POST', '/telephony/simulated/events', { body: event });
    expect(carrier.status).toBe(413);
    expect(await carrier.json()).toEqual({ error: 'internal_error', detail: 'request body is over 65536 bytes' });
    // Under it, unsigned and not JSON: 401, not 400.
    expect((await api.request('POST', '/telephony/simulated/events', { body: '{"not json' })).status).toBe(401);
  });

  it('records no cancellation from a signed orders/create body replayed under orders/cancelled', async () => {
    const target = await connection();
    const payload = order({ cancelled_at: null });
    const created = (await (await deliver(target, payload, { topic: 'orders/create' })).json()) as {
      deliveryId: string;
    };
    expect((await settled(target.id, created.deliveryId)).status).toBe('processed');
    // The same signed body, captured and sent again under another topic (Shopify signs the body, not the topic).
    const replayed = await deliver(target, payload, { topic: 'orders/cancelled' });
    expect(replayed.status).toBe(200);
    const { deliveryId } = (await replayed.json()) as { deliveryId: string };
    expect((await settled(target.id, deliveryId)).status).toBe('processed');
    const [stored] = await db.commerceOrder.findMany({ where: { connectionId: target.id } });
    expect(stored!.cancelledAt).toBeNull();
    // A signed body carrying cancelled_at is a cancellation.
    const cancelledAt = new Date().toISOString();
    const cancel = (await (
      await deliver(
        target,
        { ...payload, cancelled_at: cancelledAt, updated_at: cancelledAt },
        { topic: 'orders/cancelled' },
      )
    ).json()) as { deliveryId: string };
    expect((await settled(target.id, cancel.deliveryId)).status).toBe('processed');
    const [cancelled] = await db.commerceOrder.findMany({ where: { connectionId: target.id } });
    expect(cancelled!.cancelledAt).toEqual(new Date(cancelledAt));
  });
});

describe('delivery shapes', () => {
  it('gives keys and types of nested objects and arrays, never a value', async () => {
    const target = await connection();
    const payload = order({ note_attributes: [], tags: 'secret-tag', total_price: '987.65' });
    const { deliveryId } = (await (await deliver(target, payload)).json()) as { deliveryId: string };
    const delivery = await settled(target.id, deliveryId);
    const keys = (delivery.shape as { keys: Record<string, unknown> }).keys;
    expect(delivery.shape.type).toBe('object');
    expect(keys.id).toEqual({ type: 'number' });
    expect(keys.total_price).toEqual({ type: 'string' });
    expect(keys.fulfillment_status).toEqual({ type: 'null' });
    expect(keys.note_attributes).toEqual({ type: 'array', count: 0 });
    expect(keys.customer).toEqual({
      type: 'object',
      keys: { first_name: { type: 'string' }, last_name: { type: 'string' }, phone: { type: 'null' } },
    });
    expect(keys.line_items).toEqual({
      type: 'array',
      count: 1,
      items: {
        type: 'object',
        keys: { title: { type: 'string' }, quantity: { type: 'number' }, price: { type: 'string' } },
      },
    });
    const text = JSON.stringify(delivery);
    for (const value of ['secret-tag', '987.65', 'Ada', 'Lovelace', 'Tea', String(payload.id)])
      expect(text).not.toContain(value);
  });

  it('caps the depth and the keys of an object, saying what was cut', () => {
    let deep: unknown = { leaf: true };
    for (let level = 0; level < SHAPE_MAX_DEPTH + 2; level++) deep = { next: deep, list: [1, 2] };
    let node = payloadShape(deep) as { type: string; keys?: Record<string, any>; truncated?: true };
    for (let depth = 0; depth < SHAPE_MAX_DEPTH; depth++) {
      expect(node.keys!.list).toMatchObject({ type: 'array', count: 2 });
      node = node.keys!.next;
    }
    expect(node).toEqual({ type: 'object', truncated: true });
    const wide = Object.fromEntries(Array.from({ length: SHAPE_MAX_KEYS + 7 }, (_, i) => [`k${i}`, i]));
    const shape = payloadShape(wide) as { keys: Record<string, unknown>; omittedKeys: number };
    expect(Object.keys(shape.keys)).toHaveLength(SHAPE_MAX_KEYS);
    expect(shape.keys.k0).toEqual({ type: 'number' });
    expect(shape.omittedKeys).toBe(7);
    expect(payloadShape([[1], 'x'])).toEqual({
      type: 'array',
      count: 2,
      items: { type: 'array', count: 1, items: { type: 'number' } },
    });
  });

  it("lists deliveries newest first; the worker's sweep keeps the latest 100 of a connection", async () => {
    const target = await connection();
    const base = Date.now() - 1_000_000;
    await db.crmWebhookDelivery.createMany({
      data: Array.from({ length: 105 }, (_, i) => ({
        connectionId: target.id,
        status: 'ignored',
        topic: `seed/${i}`,
        shape: { type: 'object', keys: {} },
        receivedAt: new Date(base + i * 1000),
      })),
    });
    const { deliveryId } = (await (await deliver(target, { a: 1 }, { topic: 'shop/update' })).json()) as {
      deliveryId: string;
    };
    await settled(target.id, deliveryId);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(106);
    const listed = await deliveries(target.id);
    expect(listed).toHaveLength(100);
    expect(listed[0]!.id).toBe(deliveryId);
    expect(listed.slice(1, 4).map((delivery) => delivery.topic)).toEqual(['seed/104', 'seed/103', 'seed/102']);
    expect(listed.at(-1)!.topic).toBe('seed/6');
    expect(await trimCrmDeliveries(db)).toBeGreaterThanOrEqual(6);
    expect(await db.crmWebhookDelivery.count({ where: { connectionId: target.id } })).toBe(100);
    expect((await deliveries(target.id)).map((delivery) => delivery.id)).toEqual(listed.map((delivery) => delivery.id));
  });
});

describe('connections: the CLI and the API', () => {
  const cli = sealingAdminCli(url, TEST_SECRETS_KEYS);
  const connectCli = (workspaceId: string, shop: string, secret: string) =>
    cli.admin(['crm', 'connect', '--workspace', workspaceId, '--kind', 'shopify', '--shop', shop, '--secret', secret]);

  it('connects a shop with the CLI, printing its id and receiver; never the secret', async () => {
    const shop = newShop();
    const secret = `cli-secret-${randomUUID()}`;
    const result = await connectCli(owner.workspaceId, shop, secret);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as { id: string; webhookUrl: string };
    expect(Object.keys(printed).sort()).toEqual(['id', 'webhookUrl']);
    expect(printed.webhookUrl).toBe(`http://127.0.0.1:3000/crm/connections/${printed.id}/webhooks`);
    expect(result.stdout).not.toContain(secret);
    // Sealed with the key ring: no clear copy in the row, an envelope that opens to it for this connection only.
    const stored = await db.crmConnection.findUniqueOrThrow({ where: { id: printed.id } });
    expect(stored).toMatchObject({ secret: null, webhookSecretKeyId: 'test-ring' });
    expect(JSON.stringify(stored)).not.toContain(secret);
    const sealed = await db.crmConnection.findUniqueOrThrow({
      where: { id: printed.id },
      select: WEBHOOK_SECRET_COLUMNS,
    });
    expect(webhookSecretOf(TEST_KEYRING, sealed)).toBe(secret);
    expect(webhookSecretOf(TEST_KEYRING, { ...sealed, shopDomain: 'another.myshopify.com' })).toBeNull();
    expect(webhookSecretOf(undefined, sealed)).toBeNull();

    // The printed receiver (on this API) takes deliveries signed with the secret.
    const path = new URL(printed.webhookUrl).pathname;
    const raw = JSON.stringify({ ping: true });
    const response = await api.request('POST', path, {
      body: raw,
      headers: {
        'x-shopify-hmac-sha256': signShopifyWebhook(raw, secret),
        'x-shopify-topic': 'app/ping',
        'x-shopify-shop-domain': shop,
      },
    });
    expect(response.status).toBe(200);

    // One live connection per shop, across workspaces; a bad domain is a usage error.
    const again = await connectCli(other.workspaceId, shop, 's');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already connected');
    const bad = await connectCli(owner.workspaceId, 'example.com', 's');
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--shop');

    // Deleted, the shop can be connected again.
    expect((await api.request('DELETE', `/crm/connections/${printed.id}`, { key: owner.key })).status).toBe(204);
    const reconnected = await connectCli(other.workspaceId, shop, 's');
    expect(reconnected.code).toBe(0);
  });

  it('lists and reads connections without their secret; deletes them', async () => {
    const first = await connection();
    const listed = await api.request('GET', '/crm/connections', { key: owner.key });
    expect(listed.status).toBe(200);
    const items = (await listed.json()) as Array<Record<string, unknown>>;
    expect(items.find((item) => item.id === first.id)).toEqual({
      id: first.id,
      kind: 'shopify',
      shopDomain: first.shop,
      webhookPath: `/crm/connections/${first.id}/webhooks`,
      createdAt: expect.any(String),
      adminApi: null,
    });
    expect(JSON.stringify(items)).not.toContain(SECRET);
    // With an Admin API token: which provider and since when, never the token.
    const token = 'shpat_listed_never_shown_0123456789';
    const set = await setCrmAdminToken(db, keyringSchema.parse(newKeyringEntry('k1')), {
      connectionId: first.id,
      token,
      provider: 'shopify',
    });
    const one = await api.request('GET', `/crm/connections/${first.id}`, { key: owner.key });
    expect(one.status).toBe(200);
    const shown = (await one.json()) as Record<string, unknown>;
    expect(shown.adminApi).toEqual({ provider: 'shopify', tokenSetAt: set.setAt });
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(JSON.stringify(shown)).not.toContain(token);
    expect((await api.request('DELETE', `/crm/connections/${first.id}`, { key: owner.key })).status).toBe(204);
    expect((await api.request('GET', `/crm/connections/${first.id}`, { key: owner.key })).status).toBe(403);
    const after = (await (await api.request('GET', '/crm/connections', { key: owner.key })).json()) as Array<{
      id: string;
    }>;
    expect(after.map((item) => item.id)).not.toContain(first.id);
  });

  it("answers 403 forbidden for another workspace's connection", async () => {
    const theirs = await connection(other.workspaceId);
    for (const [method, path] of [
      ['GET', `/crm/connections/${theirs.id}`],
      ['GET', `/crm/connections/${theirs.id}/deliveries`],
      ['DELETE', `/crm/connections/${theirs.id}`],
    ] as const) {
      const response = await api.request(method, path, { key: owner.key });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden' });
    }
    expect((await db.crmConnection.findUniqueOrThrow({ where: { id: theirs.id } })).deletedAt).toBeNull();
  });

  it('refuses connecting to keys, and each route to a key without its scope', async () => {
    const target = await connection();
    const refused = await api.request('POST', '/crm/connections', { key: owner.key, body: { kind: 'shopify' } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'api_key_not_allowed' });
    const viewOnly = await createTestWorkspace(db, { scopes: ['crm.view'] });
    const noCrm = await createTestWorkspace(db, { scopes: ['sales.view'] });
    const mine = await connection(viewOnly.workspaceId);
    expect((await api.request('GET', `/crm/connections/${mine.id}/deliveries`, { key: viewOnly.key })).status).toBe(
      200,
    );
    const cases: Array<[string, string, string, string]> = [
      [noCrm.key, 'GET', '/crm/connections', 'crm.view'],
      [noCrm.key, 'GET', `/crm/connections/${target.id}`, 'crm.view'],
      [noCrm.key, 'GET', `/crm/connections/${target.id}/deliveries`, 'crm.view'],
      [viewOnly.key, 'DELETE', `/crm/connections/${mine.id}`, 'crm.delete'],
    ];
    for (const [key, method, path, requiredPermission] of cases) {
      const response = await api.request(method, path, { key });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(await response.json()).toEqual({ error: 'forbidden', requiredPermission });
    }
  });
});
