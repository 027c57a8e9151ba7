import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import { sameDigest } from '../timing-safe';

/**
 * A store's webhooks as Shopify sends them (POST /crm/connections/{id}/webhooks,
 * docs/features/commerce.md#connections-and-the-stores-webhooks): the JSON body signed by `X-Shopify-Hmac-Sha256:
 * <base64 HMAC-SHA256 of the raw body with the connection's secret>`, the topic in `X-Shopify-Topic`, the shop in
 * `X-Shopify-Shop-Domain`, and the event's id in `X-Shopify-Event-Id` (older deliveries: `X-Shopify-Webhook-Id`), the
 * same for every redelivery of one event.
 */
export const SHOPIFY_HEADERS = {
  hmac: 'x-shopify-hmac-sha256',
  topic: 'x-shopify-topic',
  shopDomain: 'x-shopify-shop-domain',
  eventId: 'x-shopify-event-id',
  webhookId: 'x-shopify-webhook-id',
} as const;

/** The kinds of connection an operator can make (`crm connect --kind`). */
export const CRM_CONNECTION_KINDS = ['shopify'] as const;
export type CrmConnectionKind = (typeof CRM_CONNECTION_KINDS)[number];

/** A shop's permanent domain, lower-cased: `<name>.myshopify.com` (name: letters, digits, hyphens). */
export const shopDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .check(atMostCodePoints(255))
  .regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/, 'must be a shop domain, <name>.myshopify.com');

/** The header value for this very body: base64 of its HMAC-SHA256 with the secret. */
export function signShopifyWebhook(rawBody: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64');
}

/** Whether the header signs this very raw body with the connection's secret; compared timing-safely. */
export function verifyShopifySignature(rawBody: string | Buffer, header: string | undefined, secret: string): boolean {
  return sameDigest(header?.trim(), signShopifyWebhook(rawBody, secret), 'base64');
}
