import type { RequestHandler } from 'express';
import { z } from 'zod';

/** Deepest nesting of objects and arrays a request may carry; more is refused before anything reads it. */
export const MAX_JSON_DEPTH = 32;

const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(text: string): string | null {
  if (NUL.test(text)) return 'contains U+0000 (NUL), which cannot be stored';
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text';
  return null;
}

type Issue = z.core.$ZodIssue;

/**
 * What PostgreSQL (text and jsonb alike) could not store, or a JSON number the service cannot keep:
 * a NUL or an unpaired surrogate in any string or object key, a number that is not finite (1e400),
 * nesting deeper than MAX_JSON_DEPTH. Checked once for every route, over the raw input before its schema
 * reads it, so no route can forget it and no value reaches the database to fail there as a 500. Iterative:
 * the depth a request arrives with cannot exhaust the stack.
 */
export function unstorableIssues(input: unknown, prefix: PropertyKey[] = []): Issue[] {
  const issues: Issue[] = [];
  const pending: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: input, path: prefix }];
  while (pending.length && issues.length < 20) {
    const { value, path } = pending.pop()!;
    const issue = (message: string, at = path) => issues.push({ code: 'custom', path: at, message, input: undefined });
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) issue(problem);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) issue('is a number out of range');
    } else if (value !== null && typeof value === 'object') {
      if (path.length - prefix.length >= MAX_JSON_DEPTH) {
        issue(`nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`);
        continue;
      }
      for (const [key, child] of Object.entries(value)) {
        const at = [...path, Array.isArray(value) ? Number(key) : key];
        const keyProblem = Array.isArray(value) ? null : stringProblem(key);
        if (keyProblem) issue(`has a key that ${keyProblem}`, at);
        else pending.push({ value: child, path: at });
      }
    }
  }
  return issues;
}

/**
 * A path that is not valid percent-encoded UTF-8 cannot name anything: refused as invalid input before
 * routing, instead of failing where a path parameter is decoded.
 */
export const refuseUndecodablePath: RequestHandler = (req, _res, next) => {
  try {
    decodeURIComponent(req.path);
    next();
  } catch {
    next(
      new z.ZodError([
        { code: 'custom', path: ['path'], message: 'is not valid percent-encoded UTF-8', input: undefined },
      ]),
    );
  }
};

/**
 * An ISO 8601 instant with its offset, in the years PostgreSQL can store as written back (0001 to 9999 in
 * UTC): "0000-12-31T23:00:00-01:00" is a valid ISO string whose year 0 PostgreSQL refuses. With its seconds, as the
 * OpenAPI description's `format: date-time` (RFC 3339) requires: zod's datetime also takes "2026-01-01T00:00Z", which
 * a client reading the description would not expect to be taken (the fuzzer sent one).
 */
export const storableInstantSchema = z.iso
  .datetime({ offset: true })
  .refine(
    (value) => /T\d{2}:\d{2}:\d{2}/.test(value),
    'must give the seconds (RFC 3339 date-time), e.g. 2026-01-01T00:00:00Z',
  )
  .refine((value) => {
    const year = new Date(value).getUTCFullYear();
    return year >= 1 && year <= 9999;
  }, 'must fall in the years 0001 to 9999 (UTC)');
