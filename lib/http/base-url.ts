import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';

/**
 * A base URL a workspace gives for an outside service (a carrier's, a sheet provider's), checked and stored
 * without its trailing slashes (docs/hostile-input.md). At most 2,048 characters, the length browsers and servers
 * commonly accept: every later use of it (a path appended, a pattern over it) stays bounded.
 */
export const BASE_URL_MAX_CHARS = 2048;

export const baseUrlSchema = z
  .string()
  .trim()
  .check(atMostCodePoints(BASE_URL_MAX_CHARS))
  .url()
  .refine((value) => /^https?:\/\//.test(value), 'must be an http(s) URL')
  .transform(withoutTrailingSlashes);

/**
 * The URL without its trailing slashes, scanned from the end: `/\/+$/` tried each start in a run of slashes not at
 * the end, to the end of the run (quadratic: 2 s on 16,000 slashes).
 */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}
