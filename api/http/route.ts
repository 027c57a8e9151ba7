import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { ErrorCode } from '../../lib/error-codes';
import type { RouteAccess } from '../door/access';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';

/** The media type of the forms carriers post their callbacks as (Twilio). */
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One answer of a route. */
export interface ResponseDeclaration {
  description: string;
  /** The body (JSON unless contentType says otherwise); none: no body is sent (204), or a file not described. */
  schema?: z.ZodType;
  /** Media type(s) of the body when not application/json (GET /docs: text/html; an export: CSV or XLSX). */
  contentType?: string | readonly string[];
  /** Headers this answer always carries. */
  headers?: readonly string[];
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * A streamed answer instead of a body: each event is written as one line of application/x-ndjson as soon
   * as it is produced (api/http/ndjson.ts). Declare it with `contentType: 'application/x-ndjson'` and the
   * schema of one event: the tests check every line against it.
   */
  events?: AsyncIterable<unknown>;
}

export interface RouteContext<Body, Params, Query> {
  body: Body;
  params: Params;
  query: Query;
  principal: Principal;
  requestId: string;
  services: AppServices;
  req: Request;
  res: Response;
  /** Aborted when the client closes the connection before the answer is complete: long work stops with it. */
  signal: AbortSignal;
}

/** One route: its path, what it requires, the schemas it validates with, and a few-line handler. */
export interface RouteDefinition<
  Body extends z.ZodType = z.ZodType,
  Params extends z.ZodType = z.ZodType,
  Query extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** OpenAPI-style path: /v1/campaigns/{campaignId}/leads. */
  path: string;
  access: RouteAccess;
  summary: string;
  tags?: string[];
  body?: Body;
  /** How the body is sent: JSON unless a carrier's callback is form-encoded (FORM_MEDIA_TYPE). */
  bodyMediaType?: typeof FORM_MEDIA_TYPE;
  params?: Params;
  query?: Query;
  /** Request headers the route reads, for the OpenAPI description. */
  headerParameters?: Array<{ name: string; description: string }>;
  /** Status of a failed validation: 400 unless the spec says otherwise (422 on the single lead push). */
  validationStatus?: 400 | 422;
  /**
   * What the route answers by status, besides the refusals every route shares (api/openapi/declared-responses.ts):
   * the OpenAPI description is generated from it, and the tests check every response against it.
   */
  responses?: Record<number, ResponseDeclaration>;
  /**
   * Runs on the raw request after the body is read and before it is validated: a public route that
   * authenticates its body (a carrier's signed status event) refuses an unsigned one before judging it.
   */
  beforeValidation?: (req: Request, services: AppServices) => void | Promise<void>;
  /**
   * A public route with `beforeValidation` is a signed webhook (api/door/webhook-door.ts): its body is read as bytes up
   * to this many (unless set: WEBHOOK_BODY_LIMIT_BYTES, 64 KiB), over it 413 before anything is parsed.
   */
  webhookBodyLimitBytes?: number;
  /** Error codes the handler itself can answer, by status (the door, validation and failures are added for every route). */
  errors?: Partial<Record<number, readonly ErrorCode[]>>;
  handler: (context: RouteContext<z.infer<Body>, z.infer<Params>, z.infer<Query>>) => Promise<Reply>;
}

/**
 * A public route with a signature to check (a carrier's, Meta's or a store's webhook): its door throttles it by address
 * and connection (api/door/webhook-door.ts), its body is read raw and checked before it is parsed.
 */
export const isSignedWebhook = (route: Pick<RouteDefinition, 'access' | 'beforeValidation'>): boolean =>
  'public' in route.access && route.beforeValidation !== undefined;

export function defineRoute<Body extends z.ZodType, Params extends z.ZodType, Query extends z.ZodType>(
  route: RouteDefinition<Body, Params, Query>,
): RouteDefinition {
  return route as unknown as RouteDefinition;
}

/** /v1/campaigns/{campaignId} -> /v1/campaigns/:campaignId */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const patterns = new Map<string, RegExp>();

/** How Express matches a path template: any one segment per parameter, a trailing slash allowed, any case. */
export function pathPattern(path: string): RegExp {
  let pattern = patterns.get(path);
  if (!pattern)
    patterns.set(
      path,
      (pattern = new RegExp(
        `^${path
          .split(/\{\w+\}/)
          .map(escapeRegExp)
          .join('[^/]+')}/?$`,
        'i',
      )),
    );
  return pattern;
}

export type RouteMatch =
  { route: RouteDefinition; allowed?: undefined } | { route: null; allowed: HttpMethod[] | null };

/**
 * The route that takes a request: on the most concrete path template matching it, the first in table
 * order (HEAD is served by GET); when none does, the methods that path takes (none: an unknown path).
 * registerRoutes lets a route answer only the requests this picks for it.
 */
export function matchRoute(routes: readonly RouteDefinition[], method: string, pathname: string): RouteMatch {
  const wanted = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const matching = candidatesOf(routes, pathname).filter((route) => pathPattern(route.path).test(pathname));
  // As OpenAPI matches paths: a concrete path before a templated one (/phone-numbers/purchase is not
  // /phone-numbers/{id}), so a method of the template never answers on the concrete path.
  const fewest = Math.min(...matching.map((route) => parameterCount(route.path)));
  const onPath = matching.filter((route) => parameterCount(route.path) === fewest);
  const route = onPath.find((candidate) => candidate.method === wanted);
  if (route) return { route };
  return { route: null, allowed: onPath.length ? [...new Set(onPath.map((candidate) => candidate.method))] : null };
}

const parameterCount = (path: string) => path.split('{').length - 1;

/** Segments of a path as pathPattern matches them: a parameter is one whole segment, one trailing slash is dropped. */
const segmentCount = (path: string) =>
  (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/').length;

/**
 * The routes of a table that may match a path, in table order: those with as many segments (pathPattern matches no
 * other), and any template that ends with a slash, which is always tested. Every request is matched once or twice
 * (register-routes.ts, app.ts): testing each of the table's 150-odd patterns had been most of matchRoute's cost,
 * per request (docs/benchmarks/bare-ladder.md). Cached by table and segment count.
 */
const candidateTables = new WeakMap<readonly RouteDefinition[], Map<number, readonly RouteDefinition[]>>();
function candidatesOf(routes: readonly RouteDefinition[], pathname: string): readonly RouteDefinition[] {
  let bySegments = candidateTables.get(routes);
  if (!bySegments) candidateTables.set(routes, (bySegments = new Map<number, readonly RouteDefinition[]>()));
  const segments = segmentCount(pathname);
  let candidates = bySegments.get(segments);
  if (!candidates) {
    const longest = Math.max(0, ...routes.map((route) => segmentCount(route.path)));
    candidates = routes.filter(
      (route) => (route.path.length > 1 && route.path.endsWith('/')) || segmentCount(route.path) === segments,
    );
    // A path longer than every template matches none but the always-tested: one shared entry, so that paths of
    // every length cannot grow the cache.
    if (segments > longest) return candidates;
    bySegments.set(segments, candidates);
  }
  return candidates;
}

/** The Allow header of a path: its methods, and HEAD wherever GET is. */
export function allowHeader(methods: readonly HttpMethod[]): string {
  const names = methods.map((method) => method.toUpperCase());
  return (names.includes('GET') ? [...names, 'HEAD'] : names).join(', ');
}
