import { z } from 'zod';
import type { RouteDefinition } from '../http/route';
import { API_DESCRIPTION } from './description';
import { errorBodySchema } from './error-schema';

type JsonObject = Record<string, unknown>;

/** Named schemas a route's schema refers to (recursive ones, such as VariableDescriptor): they live in components. */
const sharedSchemas: JsonObject = {};

function jsonSchemaOf(schema: z.ZodType): JsonObject {
  const { $schema: _ignored, $defs, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  if (!$defs) return rest;
  const moved = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonObject;
  Object.assign(sharedSchemas, moved($defs));
  return moved(rest);
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function standardErrors(route: RouteDefinition): Record<string, unknown> {
  if ('public' in route.access) return {};
  const errors: Record<string, unknown> = {
    401: errorResponse('`unauthorized` (no bearer token) or `invalid_api_key` (unknown, revoked or expired key, or deleted workspace).'),
    403: errorResponse('keysRefused' in route.access
      ? '`api_key_not_allowed`: this action is refused to API keys.'
      : '`forbidden` (with requiredPermission, or a resource of another workspace), `api_key_not_scoped`, `api_key_owner_inactive`, `workspace_pending_approval`, `workspace_suspended`, `plan_required`, `feature_not_enabled`.'),
    429: errorResponse('`rate_limited`, with Retry-After in seconds and requestId.'),
    500: errorResponse('`internal_error`.'),
    503: errorResponse('`database_unavailable`.'),
  };
  if (route.body) {
    errors[route.validationStatus ?? 400] = errorResponse('`invalid_body` with issues' + (route.validationStatus === 422 ? '.' : '; or `internal_error` when the body is not valid JSON.'));
    if (route.validationStatus === 422) errors[400] = errorResponse('`internal_error`: the body is not valid JSON.');
    errors[413] = errorResponse('`internal_error`: the body is over 1 MB.');
  }
  return errors;
}

function operationOf(route: RouteDefinition): JsonObject {
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name, in: 'path', required: true, schema: { type: 'string' },
  }));
  const queryProperties = route.query ? (jsonSchemaOf(route.query).properties as JsonObject | undefined) ?? {} : {};
  const queryParameters = Object.entries(queryProperties).map(([name, schema]) => ({ name, in: 'query', required: false, schema }));
  const responses: JsonObject = { ...standardErrors(route) };
  for (const [status, response] of Object.entries(route.responses ?? {})) {
    responses[status] = {
      description: response.description,
      ...(response.schema ? { content: { 'application/json': { schema: jsonSchemaOf(response.schema) } } } : {}),
    };
  }
  const access = route.access;
  return {
    operationId: `${route.method}${route.path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: route.summary,
    tags: route.tags,
    security: 'public' in access ? [] : [{ bearerAuth: [] }],
    'x-required-permission': 'permission' in access ? access.permission : null,
    ...('permission' in access && access.requires ? { 'x-requires': access.requires } : {}),
    ...('keysRefused' in access ? { 'x-refuses-api-keys': true } : {}),
    parameters: [
      ...pathParameters,
      ...queryParameters,
      ...(route.headerParameters ?? []).map(({ name, description }) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } })),
    ],
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchemaOf(route.body) } } } } : {}),
    responses,
  };
}

/** OpenAPI 3.1 description generated from the very route definitions and zod schemas the API validates with. */
export function buildOpenApi(routes: readonly RouteDefinition[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operationOf(route);
  return {
    openapi: '3.1.0',
    info: { title: 'Outbound Calling and Messaging Workspace API', version: '1.0.0', description: API_DESCRIPTION },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A workspace API key.' } },
      schemas: { Error: jsonSchemaOf(errorBodySchema), ...sharedSchemas },
      headers: {
        'X-Request-Id': { description: 'Id of this request; error bodies with a requestId carry the same value.', schema: { type: 'string', format: 'uuid' } },
        RateLimit: { description: 'IETF draft 7: `limit=120, remaining=119, reset=42`.', schema: { type: 'string' } },
        'RateLimit-Policy': { description: 'IETF draft 7: `120;w=60`.', schema: { type: 'string' } },
      },
    },
  };
}
