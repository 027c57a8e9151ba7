import type { Request, Response } from 'express';
import type { SqlPool } from '../../lib/sql-pool';
import { isUuid } from '../../lib/uuid';
import { rateLimited, takeFromBucket } from './rate-limit';

/**
 * Requests a client address may send a minute to the signed public webhooks (a carrier's callbacks, Meta's, a store's),
 * signed or not: a flood from one address is refused (429) before its body is read. Twilio, Telnyx, Meta and Shopify
 * spread their deliveries over many addresses; 1,200 (20 a second) from one of them is far above what one sends us.
 */
export const WEBHOOK_LIMIT_PER_IP = 1200;

/**
 * Requests a minute to one connection's receivers (the connection the path names; the provider, or the route, when it
 * names none): a flood spread over many addresses still stops at one connection's share. 6,000 (100 a second) is above a
 * full campaign's callbacks (1,000 calls on their lines, a few callbacks each over minutes).
 */
export const WEBHOOK_LIMIT_PER_CONNECTION = 6000;

/** Requests a minute to the signed public webhooks (WEBHOOK_RATE_LIMIT_PER_IP, WEBHOOK_RATE_LIMIT_PER_CONNECTION). */
export interface WebhookRateLimits {
  perAddress: number;
  perConnection: number;
}

export const DEFAULT_WEBHOOK_RATE_LIMITS: Readonly<WebhookRateLimits> = Object.freeze({
  perAddress: WEBHOOK_LIMIT_PER_IP,
  perConnection: WEBHOOK_LIMIT_PER_CONNECTION,
});

/** The longest path parameter a bucket is named after (a provider's name; connection ids are UUIDs). */
const KEY_PART_MAX = 64;

/** Whose share a webhook request is taken from: the connection its path names, else its provider, else its route. */
export function webhookConnectionKey(routePath: string, params: Record<string, unknown>): string {
  const connection = params.connectionId ?? params.id;
  if (typeof connection === 'string' && isUuid(connection)) return `webhook-connection:${connection}`;
  if (typeof params.provider === 'string') return `webhook-provider:${params.provider.slice(0, KEY_PART_MAX)}`;
  return `webhook-route:${routePath}`;
}

/**
 * The door of a signed public webhook, before its body is read: one request taken from its address's bucket, then from
 * its connection's; over either, 429 rate_limited with Retry-After, nothing read and nothing written but the buckets.
 */
export async function admitWebhook(
  sql: SqlPool,
  req: Request,
  res: Response,
  connectionKey: string,
  limits: WebhookRateLimits = DEFAULT_WEBHOOK_RATE_LIMITS,
): Promise<void> {
  const byAddress = await takeFromBucket(sql, res, `webhook-ip:${req.ip ?? 'unknown'}`, limits.perAddress);
  if (!byAddress.allowed) throw rateLimited(res, byAddress);
  const byConnection = await takeFromBucket(sql, res, connectionKey, limits.perConnection);
  if (!byConnection.allowed) throw rateLimited(res, byConnection);
}
