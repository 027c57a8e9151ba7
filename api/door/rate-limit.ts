import type { Response } from 'express';

export const RATE_LIMIT_WINDOW_SECONDS = 60;
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

/** IETF draft 7 (draft-ietf-httpapi-ratelimit-headers-07) RateLimit and RateLimit-Policy headers. */
export function setRateLimitHeaders(res: Response, state: RateLimitState): void {
  res.setHeader('RateLimit-Policy', `${state.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`);
  res.setHeader('RateLimit', `limit=${state.limit}, remaining=${state.remaining}, reset=${state.resetSeconds}`);
}
