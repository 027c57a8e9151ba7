import express, { type Express } from 'express';
import { ErrorCode } from '../lib/error-codes';
import { errorHandler } from './http/error-handler';
import { registerRoutes } from './http/register-routes';
import { assignRequestId } from './http/request-id';
import { routes } from './routes';
import type { AppServices } from './services';

export function createApp(services: AppServices, options: { trustProxy?: boolean } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy ?? false);
  app.use(assignRequestId);
  // Any content type is read as JSON, so a body that is not JSON is refused rather than ignored.
  app.use(express.json({ limit: '1mb', type: () => true, strict: false }));
  registerRoutes(app, routes, services);
  app.use((_req, res) => {
    res.status(404).json({ error: ErrorCode.not_found });
  });
  app.use(errorHandler);
  return app;
}
