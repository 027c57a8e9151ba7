import type { IncomingMessage } from 'node:http';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { authorize } from '../door/access';
import { authenticate } from '../door/authenticate';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { expressPath, FORM_MEDIA_TYPE, isSignedWebhook, matchRoute, type RouteDefinition } from './route';
import { clientGone, writeNdjson } from './ndjson';
import { unstorableIssues } from './storable-input';
import type { RequestContext } from './observe-requests';
import { addLogContext } from '../../lib/log';
import { admitWebhook, webhookConnectionKey } from '../door/webhook-door';

/** Notes a body's bytes as they were received (body-parser's verify hook). */
const recordBody = (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
  (req as BodyRead).bodyBytes = buffer.length;
  (req as BodyRead).rawBody = buffer;
};

/**
 * Any content type is read as JSON, so a body that is not JSON is refused rather than ignored. Its size is
 * noted: an empty body parses as {} and must still be told apart, since a route with a body requires one.
 */
const jsonBody = express.json({ limit: '1mb', type: () => true, strict: false, verify: recordBody });

/**
 * A form-encoded body (a carrier's callback, application/x-www-form-urlencoded), read only by the routes that take
 * one: every value a string, a repeated name an array, as the carriers' signatures are computed over them.
 */
const formBody = express.urlencoded({ limit: '1mb', extended: false, type: () => true, verify: recordBody });

/**
 * The most a signed public webhook's body may hold unless its route says more (`webhookBodyLimitBytes`): a carrier's
 * callback is a few hundred bytes to a few KB. Read as raw bytes, checked against it before anything parses it.
 */
export const WEBHOOK_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * A signed public webhook's body (api/door/webhook-door.ts): its bytes only, up to its cap, so that its signature is
 * checked before any of it is parsed; a form (Twilio's) is parsed first, as the signature covers its parameters.
 */
const webhookBodyReaders = new Map<string, RequestHandler>();
function webhookBody(route: RouteDefinition): RequestHandler {
  const limit = route.webhookBodyLimitBytes ?? WEBHOOK_BODY_LIMIT_BYTES;
  const form = route.bodyMediaType === FORM_MEDIA_TYPE;
  const name = `${form ? 'form' : 'raw'}:${limit}`;
  let reader = webhookBodyReaders.get(name);
  if (!reader) {
    const options = { limit, type: () => true, verify: recordBody };
    reader = form ? express.urlencoded({ ...options, extended: false }) : express.raw(options);
    webhookBodyReaders.set(name, reader);
  }
  return reader;
}

/** A signed webhook's JSON body, parsed once its signature passed; what express.json would have made of it. */
function parseVerifiedJson(req: Request): void {
  const raw = rawBodyOf(req);
  try {
    req.body = raw.length === 0 ? {} : (JSON.parse(raw.toString('utf8')) as unknown);
  } catch {
    throw Object.assign(new Error('request body is not valid JSON'), { type: 'entity.parse.failed', status: 400 });
  }
}

interface BodyRead {
  bodyBytes?: number;
  /** The body's bytes as received: what a signature is computed over (a carrier's status event). */
  rawBody?: Buffer;
}

/** The request body's bytes as received (empty when there was none). */
export const rawBodyOf = (req: Request): Buffer => (req as BodyRead).rawBody ?? Buffer.alloc(0);

const BODY_REQUIRED: z.core.$ZodIssue = {
  code: 'custom',
  path: [],
  message: 'a JSON body is required ({} where every field is optional)',
  input: undefined,
};

/**
 * The route's input as its schemas read it. First, for every route alike: the body is there if the
 * route takes one, and nothing in path, query or body is what PostgreSQL could not store (storable-input.ts).
 */
function parseInput(route: RouteDefinition, req: Request) {
  const issues = [
    ...unstorableIssues(req.params),
    ...(route.query ? unstorableIssues(req.query) : []),
    ...(route.body ? ((req as BodyRead).bodyBytes ? unstorableIssues(req.body) : [BODY_REQUIRED]) : []),
  ];
  if (issues.length) throw new z.ZodError(issues);
  return {
    params: route.params ? route.params.parse(req.params) : req.params,
    query: route.query ? route.query.parse(req.query) : req.query,
    body: route.body ? route.body.parse(req.body) : undefined,
  };
}

function asyncHandler(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res, next: NextFunction) => {
    handler(req, res).then(() => next(), next);
  };
}

export type Door = (
  services: AppServices,
  route: Pick<RouteDefinition, 'access' | 'path' | 'beforeValidation'> | null,
) => RequestHandler & { access?: RouteDefinition['access'] };

/** The door runs before the body is read: an unauthenticated or throttled request costs no parsing. */
export const door: Door = (services, route) => {
  const handler = asyncHandler(async (req, res) => {
    if (route && isSignedWebhook(route))
      return admitWebhook(
        services.sql,
        req,
        res,
        webhookConnectionKey(route.path, req.params),
        services.webhookRateLimits,
      );
    if (route && 'public' in route.access) return;
    const principal = await authenticate(services.sql, req, res, services.defaultRateLimitPerMinute);
    // Known before the authorization: a refused request is still logged against its campaign.
    res.locals.principal = principal;
    addLogContext({ workspaceId: principal.workspaceId });
    if (route) authorize(route.access, principal, req.path);
  });
  // Read by the test that walks the router: a route without a declared access rule fails it.
  return Object.assign(handler, { access: route?.access });
};

export function registerRoutes(
  app: Express,
  routes: readonly RouteDefinition[],
  services: AppServices,
  routeDoor: Door = door,
): void {
  for (const route of routes) {
    const handle: RequestHandler = (req, res, next) => {
      res.locals.validationStatus = route.validationStatus ?? 400;
      Promise.resolve()
        .then(async () => {
          await route.beforeValidation?.(req, services);
          if (isSignedWebhook(route) && route.bodyMediaType !== FORM_MEDIA_TYPE) parseVerifiedJson(req);
          const { params, query, body } = parseInput(route, req);
          const reply = await route.handler({
            body,
            params,
            query,
            services,
            req,
            res,
            principal: res.locals.principal as Principal,
            requestId: res.locals.requestId as string,
            signal: clientGone(res),
          });
          if (reply.events) return writeNdjson(res, reply.status, reply.events, reply.headers);
          if (reply.headers) res.set(reply.headers);
          if (reply.body === undefined) res.status(reply.status).end();
          else res.status(reply.status).json(reply.body);
        })
        .catch(next);
    };
    // A route without a body never reads one: what it was sent cannot refuse the request.
    // Express would hand PATCH /phone-numbers/purchase to PATCH /phone-numbers/{id}: only the route
    // matchRoute picks answers, so the path's other methods get 405 with the Allow header it computes.
    const pickedHere: RequestHandler = (req, res, next) => {
      if (matchRoute(routes, req.method, req.path).route !== route) return next('route');
      (res.locals as RequestContext).route = route.path;
      next();
    };
    app[route.method](
      expressPath(route.path),
      pickedHere,
      routeDoor(services, route),
      ...(route.body
        ? [isSignedWebhook(route) ? webhookBody(route) : route.bodyMediaType === FORM_MEDIA_TYPE ? formBody : jsonBody]
        : []),
      handle,
    );
  }
}
