import type { Express, NextFunction, Request, Response } from 'express';
import { authorize } from '../auth/access';
import { authenticate } from '../auth/authenticate';
import type { Principal } from '../auth/principal';
import type { AppServices } from '../services';
import { expressPath, type RouteDefinition } from './route';

const NO_PRINCIPAL = undefined as unknown as Principal;

export function registerRoutes(app: Express, routes: readonly RouteDefinition[], services: AppServices): void {
  for (const route of routes) {
    app[route.method](expressPath(route.path), async (req: Request, res: Response, next: NextFunction) => {
      try {
        res.locals.validationStatus = route.validationStatus ?? 400;
        const principal = 'public' in route.access ? NO_PRINCIPAL : await authenticate(services.db, req);
        if (principal) authorize(route.access, principal, req.path);
        const params = route.params ? route.params.parse(req.params) : req.params;
        const query = route.query ? route.query.parse(req.query) : req.query;
        const body = route.body ? route.body.parse(req.body ?? {}) : undefined;
        const reply = await route.handler({
          body, params, query, principal, requestId: res.locals.requestId as string, services, req, res,
        });
        if (reply.headers) res.set(reply.headers);
        if (reply.body === undefined) res.status(reply.status).end();
        else res.status(reply.status).json(reply.body);
      } catch (error) {
        next(error);
      }
    });
  }
}
