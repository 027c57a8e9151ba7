import express, { type Express } from 'express';
import { ErrorCode } from '../lib/error-codes';
import { errorHandler } from './http/error-handler';
import { door, registerRoutes, type Door } from './http/register-routes';
import { assignRequestId } from './http/request-id';
import { observeRequests } from './http/observe-requests';
import { allowHeader, matchRoute, type RouteDefinition } from './http/route';
import { refuseUndecodablePath } from './http/storable-input';
import { routes } from './routes';
import { codecRouter } from './codec/codec-routes';
import { logCampaignRequests } from './campaign-data/api-logs';
import type { AppServices } from './app-services';

export interface AppOptions {
  trustProxy?: boolean;
  /** The authentication and rate-limit door; replaced only to measure what it costs (bench/). */
  door?: Door;
  /**
   * Routes registered just before the real ones, behind the same middleware (request id, observation, the
   * campaign request log): only for a bench's bare route measured against a real one (bench/intake.ts).
   */
  benchRoutes?: readonly RouteDefinition[];
}

export function createApp(services: AppServices, options: AppOptions = {}): Express {
  const routeDoor = options.door ?? door;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', options.trustProxy ?? false);
  app.use(assignRequestId);
  app.use(observeRequests);
  app.use(refuseUndecodablePath);
  // The Web UI's codec server: an operator's token, not a workspace's key, so it is not behind the door.
  if (services.codecServer) app.use('/codec', codecRouter(services.codecServer));
  // Ahead of the routes, so that requests the door refuses are logged against their campaign too.
  logCampaignRequests(app, services.sql);
  if (options.benchRoutes) registerRoutes(app, options.benchRoutes, services, routeDoor);
  registerRoutes(app, routes, services, routeDoor);
  // Unknown paths and methods still pass the door: a bad key learns nothing about which paths exist.
  app.use(routeDoor(services, null), (req, res) => {
    const { allowed } = matchRoute(routes, req.method, req.path);
    if (allowed) res.status(405).set('Allow', allowHeader(allowed)).json({ error: ErrorCode.method_not_allowed });
    else res.status(404).json({ error: ErrorCode.not_found });
  });
  app.use(errorHandler);
  return app;
}
