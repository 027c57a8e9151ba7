import type { Response } from 'express';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import type { SqlPool } from '../../lib/sql-pool';
import { takeFromBucketRow } from './door-store';

export const RATE_LIMIT_WINDOW_SECONDS = 60;
export const RATE_LIMIT_WINDOW_MS = RATE_LIMIT_WINDOW_SECONDS * 1000;
/** Failed authentications admitted per client IP address and window (spec section 8). */
export const FAILED_AUTH_LIMIT_PER_IP = 300;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the oldest request of the window leaves it, freeing a slot. */
  resetSeconds: number;
  allowed: boolean;
}

export function rateLimitStateOf(
  limit: number,
  row: { allowed: boolean; remaining: number; reset_ms: number },
): RateLimitState {
  return { limit, allowed: row.allowed, remaining: row.remaining, resetSeconds: Math.ceil(row.reset_ms / 1000) };
}

/**
 * Takes one request from the rolling-window bucket `bucket` (shared by every API process: `rate_limit_take`,
 * prisma/migrations/*_rate_limit_buckets) and sets the RateLimit headers of what is left.
 */
export async function takeFromBucket(
  sql: SqlPool,
  res: Response,
  bucket: string,
  limit: number,
): Promise<RateLimitState> {
  const row = await takeFromBucketRow(sql, bucket, limit, RATE_LIMIT_WINDOW_MS);
  const rate = rateLimitStateOf(limit, row);
  setRateLimitHeaders(res, rate);
  return rate;
}

/** IETF draft 7 (draft-ietf-httpapi-ratelimit-headers-07) RateLimit and RateLimit-Policy headers. */
export function setRateLimitHeaders(res: Response, state: RateLimitState): void {
  res.setHeader('RateLimit-Policy', `${state.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`);
  res.setHeader('RateLimit', `limit=${state.limit}, remaining=${state.remaining}, reset=${state.resetSeconds}`);
}

/** 429 rate_limited with Retry-After (at least 1 s) and the request's id. */
export function rateLimited(res: Response, rate: RateLimitState): Refusal {
  return new Refusal(
    ErrorCode.rate_limited,
    { requestId: res.locals.requestId as string },
    { retryAfterSeconds: Math.max(rate.resetSeconds, 1) },
  );
}
