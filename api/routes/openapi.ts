import { buildOpenApi } from '../openapi/build-openapi';
import { defineRoute, type RouteDefinition } from '../http/route';

let cached: unknown;

export const openApiRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/v1/openapi.json',
    access: { public: true },
    summary: 'This OpenAPI 3.1 description (version 1.0.0), generated from the schemas the routes validate with.',
    tags: ['Operations'],
    responses: { 200: { description: 'The OpenAPI document.' } },
    handler: async () => {
      // Imported lazily: the route table includes this very route.
      cached ??= buildOpenApi((await import('./index')).routes);
      return { status: 200, body: cached };
    },
  }),
];
