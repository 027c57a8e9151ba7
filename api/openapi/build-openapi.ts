import { z } from 'zod';
import type { RouteDefinition } from '../http/route';
import { declaredResponses, type DeclaredResponse } from './declared-responses';
import { API_DESCRIPTION } from './description';
import { errorBodySchema } from './error-schema';
import { storableJsonSchema, withStorableInput } from './storable-schema';

type JsonObject = Record<string, unknown>;

/** Named schemas a route's schema refers to (recursive ones, such as VariableDescriptor): they live in components. */
const sharedSchemas: JsonObject = {};

/** A request is described as the schema reads it (io input), a response as the route sends it (io output). */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _ignored, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  if (!$defs) return rest;
  const moved = (value: unknown) =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonObject;
  Object.assign(sharedSchemas, moved($defs));
  return moved(rest);
}

/** A request body as published: its schema as the route reads it, with the storable-input rule every route applies. */
export function requestBodySchema(body: z.ZodType): JsonObject {
  return withStorableInput(jsonSchemaOf(body, 'input'));
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Headers every response carries; RateLimit ones are on every answer of the door that got that far. */
function headersOf(route: RouteDefinition, response: DeclaredResponse): JsonObject {
  return Object.fromEntries(
    [
      'X-Request-Id',
      ...('public' in route.access ? [] : ['RateLimit', 'RateLimit-Policy']),
      ...(response.headers ?? []),
    ].map((name) => [name, headerRef(name)]),
  );
}

function contentOf(response: DeclaredResponse): JsonObject | undefined {
  if (response.errorCodes) {
    return {
      'application/json': {
        schema: {
          allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { enum: response.errorCodes } } }],
        },
      },
    };
  }
  if (!response.schema) return undefined;
  const schema = jsonSchemaOf(response.schema, 'output');
  const mediaTypes = [response.contentType ?? 'application/json'].flat();
  return Object.fromEntries(mediaTypes.map((mediaType) => [mediaType, { schema }]));
}

function operationOf(route: RouteDefinition): JsonObject {
  const pathSchemas = route.params
    ? ((jsonSchemaOf(route.params, 'input').properties as JsonObject | undefined) ?? {})
    : {};
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: withStorableInput((pathSchemas[name!] as JsonObject | undefined) ?? { type: 'string' }),
  }));
  const queryProperties = route.query
    ? ((jsonSchemaOf(route.query, 'input').properties as Record<string, JsonObject> | undefined) ?? {})
    : {};
  const queryParameters = Object.entries(queryProperties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    ...(schema.description ? { description: schema.description } : {}),
    schema: withStorableInput(schema),
  }));
  const responses: JsonObject = {};
  for (const [status, response] of Object.entries(declaredResponses(route))) {
    const content = contentOf(response);
    responses[status] = {
      description: response.description,
      headers: headersOf(route, response),
      ...(content ? { content } : {}),
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
      ...(route.headerParameters ?? []).map(({ name, description }) => ({
        name,
        in: 'header',
        required: false,
        description,
        schema: { type: 'string' },
      })),
    ],
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { [route.bodyMediaType ?? 'application/json']: { schema: requestBodySchema(route.body) } },
          },
        }
      : {}),
    responses,
  };
}

const headers = {
  'X-Request-Id': {
    description: 'Id of this request; error bodies with a requestId carry the same value.',
    required: true,
    schema: { type: 'string', format: 'uuid' },
  },
  RateLimit: { description: 'IETF draft 7: `limit=120, remaining=119, reset=42`.', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'IETF draft 7: `120;w=60`.', schema: { type: 'string' } },
  'Retry-After': {
    description: 'Seconds to wait before sending the request again.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  Allow: { description: 'The methods the path takes.', required: true, schema: { type: 'string' } },
  Location: { description: 'Where the created resource is followed.', required: true, schema: { type: 'string' } },
  'X-Total-Count': {
    description: 'Items of the list in all its pages.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Preview-Synthesizer': {
    description:
      'Who synthesised the preview: `amazon-polly` (Amazon Polly, the voices calls speak with), `polly-twin` (its local twin) or `espeak-ng` (the embedded offline synthesiser).',
    required: true,
    schema: { type: 'string', enum: ['amazon-polly', 'polly-twin', 'espeak-ng'] },
  },
};

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
      schemas: { Error: jsonSchemaOf(errorBodySchema, 'output'), StorableJson: storableJsonSchema, ...sharedSchemas },
      headers,
    },
  };
}
