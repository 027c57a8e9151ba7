import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { authorize } from '../door/access';
import { authenticate } from '../door/authenticate';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { expressPath, FORM_MEDIA_TYPE, matchRoute, type RouteDefinition } from './route';
import { clientGone, writeNdjson } from './ndjson';
import { unstorableIssues } from './storable-input';
import type { RequestContext } from './observe-requests';
import { addLogContext } from '../../lib/log';

/**
 * Any content type is read as JSON, so a body that is not JSON is refused rather than ignored. Its size is
 * noted: an empty body parses as {} and must still be told apart, since a route with a body requires one.
 */
const jsonBody = express.json({
  limit: '1mb',
  type: () => true,
  strict: false,
  verify: (req, _res, buffer) => {
    (req as BodyRead).bodyBytes = buffer.length;
    (req as BodyRead).rawBody = buffer;
  },
});

/**
 * A form-encoded body (a carrier's callback, application/x-www-form-urlencoded), read only by the routes that take
 * one: every value a string, a repeated name an array, as the carriers' signatures are computed over them.
 */
const formBody = express.urlencoded({
  limit: '1mb',
  extended: false,
  type: () => true,
  verify: (req, _res, buffer) => {
    (req as BodyRead).bodyBytes = buffer.length;
    (req as BodyRead).rawBody = buffer;
  },
});

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
  route: Pick<RouteDefinition, 'access'> | null,
) => RequestHandler & { access?: RouteDefinition['access'] };

/** The door runs before the body is read: an unauthenticated or throttled request costs no parsing. */
export const door: Door = (services, route) => {
  const handler = asyncHandler(async (req, res) => {
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
      ...(route.body ? [route.bodyMediaType === FORM_MEDIA_TYPE ? formBody : jsonBody] : []),
      handle,
    );
  }
}
