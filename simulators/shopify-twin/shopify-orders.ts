import { createHmac, randomUUID } from 'node:crypto';

/**
 * Realistic Shopify order webhooks for the store simulator (simulators/shopify-twin/main.ts), tests and the
 * bench: the REST Order resource as orders/create carries it (trimmed to what a small shop sends), and the
 * headers Shopify sends with it, signed with the connection's secret. An attributed order carries the
 * campaign in its landing site's UTM parameters as the service's links do (lib/commerce/attribution.ts):
 * `utm_source=outbound-ai&utm_medium=whatsapp&utm_campaign=<campaignId>`.
 */

/**
 * How Shopify signs a webhook (https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook):
 * X-Shopify-Hmac-SHA256 is the base64 HMAC-SHA256 of the raw body, keyed with the app's (here the connection's)
 * secret. The simulator's own reading of the page, not the product's verifier's (lib/crm/shopify-webhook.ts).
 */
const signed = (rawBody: string, secret: string) => createHmac('sha256', secret).update(rawBody).digest('base64');

/** The Admin API version the simulated shop's webhooks are written in. */
export const SHOPIFY_API_VERSION = '2025-10';

const CUSTOMERS = [
  ['Ana', 'García'],
  ['Bruno', 'Costa'],
  ['Chloé', 'Martin'],
  ['Dev', 'Patel'],
  ['Emma', 'Schmidt'],
  ['Farah', 'Haddad'],
  ['Gus', 'Okafor'],
  ['Hana', 'Sato'],
] as const;

const PRODUCTS = [
  { title: 'Vitamin C Serum', sku: 'SER-01', price: '34.90' },
  { title: 'Daily Moisturizer', sku: 'MOI-02', price: '22.50' },
  { title: 'Sunscreen SPF 50', sku: 'SUN-03', price: '18.00' },
  { title: 'Night Cream', sku: 'NIG-04', price: '41.00' },
] as const;

export interface ShopifyOrderOptions {
  /** A sequence number: the order's id, number and contents follow from it. */
  seq: number;
  /** E.164; null or absent: the order carries no phone. */
  phone?: string | null;
  /** The campaign the order's landing site names (utm_campaign); absent: an organic landing site. */
  attributedCampaignId?: string | null;
  /** The store's time of the order; default now. */
  createdAt?: Date;
  currency?: string;
}

/** The store writes its times in the shop's zone, with its offset ("2026-11-20T10:30:00-05:00"). */
function shopTime(date: Date): string {
  const shifted = new Date(date.getTime() - 5 * 3600_000);
  return `${shifted.toISOString().slice(0, 19)}-05:00`;
}

/** An orders/create payload: the customer, one or two line items, totals as strings, the landing site. */
export function shopifyOrderPayload(options: ShopifyOrderOptions) {
  const { seq } = options;
  const id = 5_940_139_000_000 + seq;
  const [firstName, lastName] = CUSTOMERS[seq % CUSTOMERS.length]!;
  const items = [PRODUCTS[seq % PRODUCTS.length]!, ...(seq % 3 === 0 ? [PRODUCTS[(seq + 1) % PRODUCTS.length]!] : [])];
  const subtotalCents = items.reduce((sum, item) => sum + Math.round(Number(item.price) * 100), 0);
  const taxCents = Math.round(subtotalCents * 0.21);
  const money = (cents: number) => (cents / 100).toFixed(2);
  const created = shopTime(options.createdAt ?? new Date());
  const phone = options.phone ?? null;
  const email = `${firstName.toLowerCase()}.${seq}@example.com`;
  const landingSite = options.attributedCampaignId
    ? `/products/${items[0]!.sku.toLowerCase()}?utm_source=outbound-ai&utm_medium=whatsapp&utm_campaign=${options.attributedCampaignId}`
    : '/';
  const address = {
    first_name: firstName,
    last_name: lastName,
    name: `${firstName} ${lastName}`,
    address1: `${10 + (seq % 90)} Market Street`,
    city: 'San Francisco',
    province_code: 'CA',
    zip: '94103',
    country_code: 'US',
    phone,
  };
  return {
    id,
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    name: `#${1000 + seq}`,
    order_number: 1000 + seq,
    email,
    contact_email: email,
    created_at: created,
    updated_at: created,
    processed_at: created,
    cancelled_at: null,
    cancel_reason: null,
    currency: options.currency ?? 'USD',
    presentment_currency: options.currency ?? 'USD',
    subtotal_price: money(subtotalCents),
    total_tax: money(taxCents),
    total_discounts: '0.00',
    total_price: money(subtotalCents + taxCents),
    financial_status: seq % 7 === 6 ? 'pending' : 'paid',
    fulfillment_status: null,
    confirmed: true,
    test: false,
    phone,
    buyer_accepts_marketing: seq % 2 === 0,
    landing_site: landingSite,
    referring_site: options.attributedCampaignId ? '' : 'https://www.google.com/',
    source_name: 'web',
    note: null,
    note_attributes: [],
    tags: '',
    customer: {
      id: 7_001_000 + seq,
      email,
      first_name: firstName,
      last_name: lastName,
      phone,
      state: 'enabled',
      verified_email: true,
    },
    billing_address: address,
    shipping_address: address,
    line_items: items.map((item, index) => ({
      id: id * 10 + index,
      title: item.title,
      quantity: 1,
      price: item.price,
      sku: item.sku,
      variant_id: 44_000_000 + index,
      requires_shipping: true,
      taxable: true,
    })),
  };
}

export interface SignedShopifyWebhook {
  /** The raw body: what is signed and must be sent byte for byte. */
  body: string;
  headers: Record<string, string>;
  eventId: string;
}

/** A payload as Shopify delivers it: its JSON body, the topic, shop, event, webhook and version headers, and the signature. */
export function signedShopifyWebhook(input: {
  payload: unknown;
  topic?: string;
  shop: string;
  secret: string;
  eventId?: string;
}): SignedShopifyWebhook {
  const body = JSON.stringify(input.payload);
  const eventId = input.eventId ?? randomUUID();
  return {
    body,
    eventId,
    headers: {
      'content-type': 'application/json',
      // The headers Shopify sends with every webhook (same page): topic, signature, shop, event and webhook ids.
      'x-shopify-topic': input.topic ?? 'orders/create',
      'x-shopify-hmac-sha256': signed(body, input.secret),
      'x-shopify-shop-domain': input.shop,
      'x-shopify-event-id': eventId,
      'x-shopify-webhook-id': randomUUID(),
      'x-shopify-api-version': SHOPIFY_API_VERSION,
      'x-shopify-triggered-at': new Date().toISOString(),
    },
  };
}

/** Posts a signed webhook; answers the receiver's status. */
export async function postShopifyWebhook(url: string, webhook: SignedShopifyWebhook): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers: webhook.headers, body: webhook.body });
  await response.arrayBuffer();
  return response.status;
}
