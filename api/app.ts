import express, { type Express } from 'express';
import { ErrorCode } from '../lib/error-codes';
import { errorHandler } from './http/error-handler';
import { door, registerRoutes } from './http/register-routes';
import { assignRequestId } from './http/request-id';
import { routes } from './routes';
import type { AppServices } from './services';

export function createApp(services: AppServices, options: { trustProxy?: boolean } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', options.trustProxy ?? false);
  app.use(assignRequestId);
  registerRoutes(app, routes, services);
  // Unknown paths still pass the door: a bad key learns nothing about which paths exist.
  app.use(door(services, null), (_req, res) => {
    res.status(404).json({ error: ErrorCode.not_found });
  });
  app.use(errorHandler);
  return app;
}
