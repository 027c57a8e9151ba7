import net from 'node:net';
import { parse, validate } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import type { OpenedAdminConnection } from '../../lib/crm/admin-token';
import {
  CUSTOMERS_QUERY,
  SHOPIFY_ADMIN_API_VERSION,
  customerVerdict,
  readCustomersPage,
  shopifyAdminClient,
  throttleWaitMs,
  AdminAccessRefused,
} from '../../lib/crm/shopify-admin';
import {
  ADMIN_API_VERSION,
  ADMIN_GRAPHQL_PATH,
  createStoreAdminTwin,
  loadAdminSchema,
  twinCustomers,
} from '../../simulators/shopify-twin/admin-twin';

// The store twin's Admin API against Shopify's vendored schema, and the product's client against the twin: the same
// code that reads a real store (lib/crm/shopify-admin.ts), only the base URL differs.
const SHOP = 'twin-store.myshopify.com';
const TOKEN = 'shpat_twin_0123456789abcdef';
const twin = createStoreAdminTwin({
  shops: [{ shopDomain: SHOP, accessToken: TOKEN, customers: twinCustomers(45) }],
  bucketSize: 100,
  // Slow enough that a drained bucket stays short of a page (22 points) for 440 ms, however loaded the machine.
  restoreRate: 50,
  maxQueryCost: 100,
});
const baseUrl = await twin.listen();
afterAll(() => twin.close());

const connection = (accessToken = TOKEN): OpenedAdminConnection => ({
  connectionId: '00000000-0000-4000-8000-000000000000',
  shopDomain: SHOP,
  provider: 'shopify-twin',
  baseUrl,
  accessToken,
});

const post = (body: unknown, token: string | null = TOKEN) =>
  fetch(`${baseUrl}${ADMIN_GRAPHQL_PATH}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token && { 'X-Shopify-Access-Token': token }) },
    body: JSON.stringify(body),
  });

describe("the product's query and Shopify's Admin schema", () => {
  it('validates against the vendored schema (graphql validate), at the version the client asks for', () => {
    expect(validate(loadAdminSchema(), parse(CUSTOMERS_QUERY))).toEqual([]);
    expect(SHOPIFY_ADMIN_API_VERSION).toBe(ADMIN_API_VERSION);
    expect(shopifyAdminClient(connection()).getApiUrl()).toBe(`https://${SHOP}/admin/api/2025-04/graphql.json`);
  });

  it('a field Shopify does not have is refused, by the schema and by the twin', async () => {
    const wrong = CUSTOMERS_QUERY.replace('displayName', 'phone_number');
    expect(validate(loadAdminSchema(), parse(wrong)).map((error) => error.message)).toEqual([
      'Cannot query field "phone_number" on type "Customer".',
    ]);
    const answer = (await (await post({ query: wrong, variables: { first: 5 } })).json()) as {
      errors: Array<{ message: string; extensions: { code: string } }>;
      data?: unknown;
    };
    expect(answer.errors[0]).toMatchObject({
      message: 'Cannot query field "phone_number" on type "Customer".',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect(answer.data).toBeUndefined();
  });
});

describe('the store twin', () => {
  it("answers 401 with Shopify's body without the token, or with another", async () => {
    for (const token of [null, 'shpat_wrong']) {
      const response = await post({ query: CUSTOMERS_QUERY, variables: { first: 5 } }, token);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        errors: '[API] Invalid API key or access token (unrecognized login or wrong password)',
      });
    }
    await expect(readCustomersPage(connection('shpat_wrong'), null, 5)).rejects.toThrow(AdminAccessRefused);
  });

  it('pages the customers by cursor through the client, with the cost extension', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page = await readCustomersPage(connection(), after, 10);
      if (page.kind === 'throttled') {
        await new Promise((resolve) => setTimeout(resolve, throttleWaitMs(page.cost, page.cost!.requestedQueryCost)));
        continue;
      }
      pages++;
      seen.push(...page.customers.map((customer) => customer.id));
      // 2 points for the connection and 2 a customer (the Customer and its phone number object).
      expect(page.cost).toMatchObject({
        requestedQueryCost: 22,
        throttleStatus: { maximumAvailable: 100, restoreRate: 50 },
      });
      expect(page.cost!.actualQueryCost).toBe(2 + page.customers.length * 2);
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    expect(pages).toBe(5);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, index) => `gid://shopify/Customer/${1001 + index}`));
  });

  it('answers THROTTLED, as Shopify does, when the bucket holds less than the query asks', async () => {
    await fetch(`${baseUrl}/control/shops/${SHOP}/drain`, { method: 'POST' });
    const answer = (await (await post({ query: CUSTOMERS_QUERY, variables: { first: 10 } })).json()) as Record<
      string,
      any
    >;
    expect(answer.errors).toEqual([
      {
        message: 'Throttled',
        extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
      },
    ]);
    expect(answer.extensions.cost).toMatchObject({ requestedQueryCost: 22, actualQueryCost: null });
    expect(answer.extensions.cost.throttleStatus.currentlyAvailable).toBeLessThan(22);
    expect(answer.data).toBeUndefined();
    await fetch(`${baseUrl}/control/shops/${SHOP}/drain`, { method: 'POST' });
    expect((await readCustomersPage(connection(), null, 10)).kind).toBe('throttled');
  });

  it('refuses a query above the single query maximum (scaled down here to 100 points)', async () => {
    const both = CUSTOMERS_QUERY.replace('nodes {', 'edges { cursor node { id } } nodes {');
    const answer = (await (await post({ query: both, variables: { first: 40 } })).json()) as Record<string, any>;
    // The connection's 2 points, and 40 times a customer's edge (1) and its node with its phone number object (2).
    expect(answer.errors[0]).toEqual({
      message: 'Query cost is 122, which exceeds the single query max cost limit (100).',
      extensions: { code: 'MAX_COST_EXCEEDED', cost: 122, maxCost: 100 },
    });
  });
});

describe('the wait before the next page', () => {
  const cost = (currentlyAvailable: number, restoreRate = 50) => ({
    requestedQueryCost: 502,
    throttleStatus: { maximumAvailable: 1000, currentlyAvailable, restoreRate },
  });
  it('is nothing while the bucket covers the query, else the missing points at the restore rate', () => {
    expect(throttleWaitMs(cost(600), 502)).toBe(0);
    expect(throttleWaitMs(cost(2), 502)).toBe(10_000);
    expect(throttleWaitMs(cost(402, 100), 502)).toBe(1000);
    expect(throttleWaitMs(null, 502)).toBe(1000);
  });
});

describe('which customers are imported', () => {
  const customer = (defaultPhoneNumber: { phoneNumber: string; marketingState: string } | null) => ({
    id: 'gid://shopify/Customer/1',
    displayName: 'Ana',
    defaultPhoneNumber,
  });
  it('SUBSCRIBED with a valid E.164 phone only; every other state skipped under its name', () => {
    expect(customerVerdict(customer({ phoneNumber: '+14155550101', marketingState: 'SUBSCRIBED' }))).toEqual({
      import: true,
      phone: '+14155550101',
    });
    for (const state of ['NOT_SUBSCRIBED', 'PENDING', 'UNSUBSCRIBED', 'REDACTED', 'INVALID'])
      expect(customerVerdict(customer({ phoneNumber: '+14155550101', marketingState: state }))).toEqual({
        import: false,
        reason: state,
      });
    expect(customerVerdict(customer(null))).toEqual({ import: false, reason: 'no_phone' });
    for (const phoneNumber of ['415-555-0101', '+10005550000', ''])
      expect(customerVerdict(customer({ phoneNumber, marketingState: 'SUBSCRIBED' })).import).toBe(false);
  });
});

describe('a store that never answers', () => {
  it('fails the page within the Admin API timeout instead of waiting for as long as the socket stays open', async () => {
    const sockets = new Set<net.Socket>();
    const hung = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const failed = await readCustomersPage(
        { ...connection(), baseUrl: `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}` },
        null,
        10,
        300,
      ).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      expect(failed).not.toBeInstanceOf(AdminAccessRefused);
      // The budget: the 300 ms timeout and a generous margin for a loaded machine; before, it waited without end.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      hung.close();
    }
  });
});
