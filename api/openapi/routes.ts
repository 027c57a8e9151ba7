import { z } from 'zod';
import { buildOpenApi } from './build-openapi';
import { defineRoute, type RouteDefinition } from '../http/route';

/** The route of the OpenAPI description of routeTable(): handed over as a function, since the table includes this very route. */
export function openApiRoutes(routeTable: () => readonly RouteDefinition[]): RouteDefinition[] {
  let cached: unknown;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/openapi.json',
      access: { public: true },
      summary: 'This OpenAPI 3.1 description (version 1.0.0), generated from the schemas the routes validate with.',
      tags: ['Operations'],
      responses: {
        200: {
          description: 'The OpenAPI document.',
          schema: z.looseObject({
            openapi: z.literal('3.1.0'),
            info: z.looseObject({ version: z.string() }),
            paths: z.record(z.string(), z.unknown()),
          }),
        },
      },
      handler: async () => {
        cached ??= buildOpenApi(routeTable());
        return { status: 200, body: cached };
      },
    }),
  ];
}
