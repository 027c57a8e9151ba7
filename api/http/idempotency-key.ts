import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';

/** An idempotency key, in a header or a body: 1 to 255 characters. */
const idempotencyKeySchema = z.string().min(1).check(atMostCodePoints(255));

/** The Idempotency-Key header of a route where it is optional: undefined without one; 400 when it is not 1 to 255 characters. */
export function optionalIdempotencyKey(req: Request): string | undefined {
  const header = req.get('idempotency-key');
  if (header === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(header);
  if (!parsed.success)
    throw new z.ZodError([
      { code: 'custom', path: ['Idempotency-Key'], message: '1 to 255 characters', input: undefined },
    ]);
  return parsed.data;
}
