import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import {
  GraphQLError,
  Kind,
  buildSchema,
  execute,
  getNamedType,
  isObjectType,
  parse,
  validate,
  type DocumentNode,
  type FieldNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { closeHttp, listenHttp } from '../../lib/http/listen';

/*
 * The store twin's Admin API (docs/features/crm.md#the-store-twin): `POST /admin/api/2025-04/graphql.json` as Shopify
 * answers it, for the customers the import reads. Every query is parsed, validated and executed against Shopify's Admin
 * schema as vendored (vendor/graphql/shopify-admin/, cut to `customers`): a query the real API would refuse for its
 * shape is refused here too. Auth by X-Shopify-Access-Token (401 otherwise, Shopify's body); a leaky bucket of cost
 * points per shop (Shopify's default 1000 points, restoring 50 a second; scaled down for tests) with the calculated cost
 * in `extensions.cost`, and THROTTLED errors when a query asks for more than the bucket holds.
 */

export const ADMIN_API_VERSION = '2025-04';
export const ADMIN_GRAPHQL_PATH = `/admin/api/${ADMIN_API_VERSION}/graphql.json`;

export const SMS_MARKETING_STATES = ['NOT_SUBSCRIBED', 'PENDING', 'SUBSCRIBED', 'UNSUBSCRIBED', 'REDACTED'] as const;

export interface TwinCustomer {
  /** The numeric part of gid://shopify/Customer/N; customers are served in ascending id (Shopify's default order). */
  id: number;
  firstName: string | null;
  lastName: string | null;
  defaultPhoneNumber: { phoneNumber: string; marketingState: string } | null;
}

export interface TwinShop {
  shopDomain: string;
  accessToken: string;
  customers: readonly TwinCustomer[];
}

export interface StoreAdminTwinOptions {
  shops: readonly TwinShop[];
  /** The bucket's size in cost points (Shopify: 1000 for a standard plan). */
  bucketSize?: number;
  /** Points restored per second (Shopify: 50 for a standard plan). */
  restoreRate?: number;
  /** The largest cost one query may ask for (Shopify: 1000; scaled down with the bucket in tests). */
  maxQueryCost?: number;
  now?: () => number;
}

const SCHEMA_FILE = fileURLToPath(
  new URL('../../vendor/graphql/shopify-admin/admin.customers.graphql', import.meta.url),
);

/** Shopify's vendored Admin schema (the cut the import needs). */
export const loadAdminSchema = (): GraphQLSchema => buildSchema(readFileSync(SCHEMA_FILE, 'utf8'));

const customerGid = (id: number) => `gid://shopify/Customer/${id}`;

/** Opaque to clients, as Shopify's are: base64 of the last id served. */
const cursorOf = (id: number) => Buffer.from(JSON.stringify({ last_id: id }), 'utf8').toString('base64');
function idAfter(cursor: string): number | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8')) as { last_id?: unknown };
    return typeof parsed.last_id === 'number' ? parsed.last_id : null;
  } catch {
    return null;
  }
}

class TwinQueryError extends GraphQLError {
  constructor(message: string, code: string) {
    super(message, { extensions: { code } });
  }
}

/**
 * Shopify's calculated cost, as its documentation describes it: a scalar or enum field is free, an object 1 point, a
 * connection 2 points plus `first` (or `last`) times the cost of one of its nodes. PageInfo is free.
 */
function selectionCost(
  schema: GraphQLSchema,
  parent: GraphQLObjectType,
  selectionSet: SelectionSetNode | undefined,
  variables: Record<string, unknown>,
): number {
  let cost = 0;
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind !== Kind.FIELD) continue;
    const field = parent.getFields()[selection.name.value];
    if (!field) continue;
    const type = getNamedType(field.type);
    if (!isObjectType(type) || type.name === 'PageInfo') continue;
    if (type.name.endsWith('Connection')) {
      const size = connectionSize(selection, variables);
      cost += 2 + size * connectionNodeCost(schema, type, selection.selectionSet, variables);
    } else cost += 1 + selectionCost(schema, type, selection.selectionSet, variables);
  }
  return cost;
}

function connectionNodeCost(
  schema: GraphQLSchema,
  connection: GraphQLObjectType,
  selectionSet: SelectionSetNode | undefined,
  variables: Record<string, unknown>,
): number {
  let perNode = 0;
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind !== Kind.FIELD) continue;
    const name = selection.name.value;
    const fields = connection.getFields();
    if (name === 'nodes') {
      const node = getNamedType(fields.nodes!.type) as GraphQLObjectType;
      perNode += 1 + selectionCost(schema, node, selection.selectionSet, variables);
    } else if (name === 'edges') {
      const edge = getNamedType(fields.edges!.type) as GraphQLObjectType;
      const nodeSelection = selection.selectionSet?.selections.find(
        (inner): inner is FieldNode => inner.kind === Kind.FIELD && inner.name.value === 'node',
      );
      const node = getNamedType(edge.getFields().node!.type) as GraphQLObjectType;
      perNode += 1 + selectionCost(schema, node, nodeSelection?.selectionSet, variables);
    }
  }
  return perNode;
}

function connectionSize(field: FieldNode, variables: Record<string, unknown>): number {
  for (const argument of field.arguments ?? []) {
    if (argument.name.value !== 'first' && argument.name.value !== 'last') continue;
    const value = argument.value;
    if (value.kind === Kind.INT) return Number(value.value);
    if (value.kind === Kind.VARIABLE) return Number(variables[value.name.value] ?? 0);
  }
  return 0;
}

interface Bucket {
  available: number;
  at: number;
}

export function createStoreAdminTwin(options: StoreAdminTwinOptions) {
  const bucketSize = options.bucketSize ?? 1000;
  const restoreRate = options.restoreRate ?? 50;
  const maxQueryCost = options.maxQueryCost ?? 1000;
  const now = options.now ?? Date.now;
  const schema = loadAdminSchema();
  const queryRoot = schema.getQueryType()!;
  const buckets = new Map<string, Bucket>();
  const stats = { requests: 0, throttled: 0, unauthorized: 0, invalid: 0, customersServed: 0 };

  function bucketOf(shop: string): Bucket {
    let bucket = buckets.get(shop);
    if (!bucket) buckets.set(shop, (bucket = { available: bucketSize, at: now() }));
    const at = now();
    bucket.available = Math.min(bucketSize, bucket.available + ((at - bucket.at) / 1000) * restoreRate);
    bucket.at = at;
    return bucket;
  }

  const throttleStatus = (bucket: Bucket) => ({
    maximumAvailable: bucketSize,
    currentlyAvailable: Math.floor(bucket.available),
    restoreRate,
  });

  function customersOf(shop: TwinShop) {
    return (args: { first?: number | null; last?: number | null; after?: string | null; before?: string | null }) => {
      if (args.last != null || args.before != null)
        throw new TwinQueryError('the store twin pages forward only (first, after)', 'NOT_IMITATED');
      if (args.first == null) throw new TwinQueryError('you must provide one of first or last', 'BAD_REQUEST');
      if (args.first > 250 || args.first < 0)
        throw new TwinQueryError('The first argument must be between 0 and 250', 'BAD_REQUEST');
      const afterId = args.after == null ? 0 : idAfter(args.after);
      if (afterId === null) throw new TwinQueryError(`Invalid cursor for current pagination sort.`, 'BAD_REQUEST');
      const start = shop.customers.findIndex((customer) => customer.id > afterId);
      const rest = start === -1 ? [] : shop.customers.slice(start);
      const page = rest.slice(0, args.first);
      stats.customersServed += page.length;
      const nodes = page.map((customer) => ({
        id: customerGid(customer.id),
        firstName: customer.firstName,
        lastName: customer.lastName,
        displayName: [customer.firstName, customer.lastName].filter(Boolean).join(' ') || 'Customer',
        defaultPhoneNumber: customer.defaultPhoneNumber,
      }));
      return {
        nodes,
        edges: nodes.map((node, index) => ({ cursor: cursorOf(page[index]!.id), node })),
        pageInfo: {
          hasNextPage: rest.length > page.length,
          hasPreviousPage: afterId > 0,
          startCursor: page.length ? cursorOf(page[0]!.id) : null,
          endCursor: page.length ? cursorOf(page[page.length - 1]!.id) : null,
        },
      };
    };
  }

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  // TEST CONTROL routes, not Shopify's: what the twin answered, and a shop's bucket emptied (another app of the store
  // spending its points), so the next queries are THROTTLED until it refills.
  app.get('/control/stats', (_req, res) => res.json(stats));
  app.post('/control/shops/:shop/drain', (req, res) => {
    const bucket = bucketOf(String(req.params.shop));
    bucket.available = 0;
    res.json({ shop: req.params.shop, currentlyAvailable: 0 });
  });
  app.post(ADMIN_GRAPHQL_PATH, (req: Request, res: Response) => {
    stats.requests++;
    const token = req.header('X-Shopify-Access-Token');
    const shop = token ? options.shops.find((each) => each.accessToken === token) : undefined;
    if (!shop) {
      stats.unauthorized++;
      res.status(401).json({ errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' });
      return;
    }
    const body = req.body as { query?: unknown; variables?: unknown };
    if (typeof body?.query !== 'string') {
      stats.invalid++;
      res.status(400).json({ errors: { query: 'Required parameter missing or invalid' } });
      return;
    }
    const variables = (body.variables && typeof body.variables === 'object' ? body.variables : {}) as Record<
      string,
      unknown
    >;
    let document: DocumentNode;
    try {
      document = parse(body.query);
    } catch (error) {
      stats.invalid++;
      res.json({ errors: [{ ...(error as GraphQLError).toJSON(), extensions: { code: 'PARSE_ERROR' } }] });
      return;
    }
    const invalid = validate(schema, document);
    if (invalid.length > 0) {
      stats.invalid++;
      res.json({
        errors: invalid.map((error) => ({ ...error.toJSON(), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })),
      });
      return;
    }
    const operation = document.definitions.find(
      (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
    )!;
    const requested = selectionCost(schema, queryRoot, operation.selectionSet, variables);
    const bucket = bucketOf(shop.shopDomain);
    if (requested > maxQueryCost) {
      res.json({
        errors: [
          {
            message: `Query cost is ${requested}, which exceeds the single query max cost limit (${maxQueryCost}).`,
            extensions: { code: 'MAX_COST_EXCEEDED', cost: requested, maxCost: maxQueryCost },
          },
        ],
      });
      return;
    }
    if (bucket.available < requested) {
      stats.throttled++;
      res.json({
        errors: [
          {
            message: 'Throttled',
            extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
          },
        ],
        extensions: {
          cost: { requestedQueryCost: requested, actualQueryCost: null, throttleStatus: throttleStatus(bucket) },
        },
      });
      return;
    }
    const result = execute({
      schema,
      document,
      variableValues: variables,
      rootValue: { customers: customersOf(shop) },
    }) as Awaited<ReturnType<typeof execute>>;
    // The points the query did not use (fewer nodes than asked) go back into the bucket.
    const served = (result.data as { customers?: { nodes?: unknown[] } } | null | undefined)?.customers?.nodes?.length;
    const size = connectionSizeOf(operation, variables);
    const actual =
      served === undefined || size === 0
        ? requested
        : requested - Math.round(((requested - 2) / size) * (size - served));
    bucket.available -= actual;
    res.json({
      ...(result.errors && {
        errors: result.errors.map((error) => ({
          ...error.toJSON(),
          extensions: {
            code: (error.originalError as GraphQLError | undefined)?.extensions?.code ?? 'INTERNAL_SERVER_ERROR',
          },
        })),
      }),
      data: result.data ?? null,
      extensions: {
        cost: { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus: throttleStatus(bucket) },
      },
    });
  });

  /** `first` of the operation's connection (the one the import sends), for the refund of unused points. */
  function connectionSizeOf(operation: OperationDefinitionNode, variables: Record<string, unknown>) {
    const field = operation.selectionSet.selections.find(
      (selection): selection is FieldNode => selection.kind === Kind.FIELD,
    );
    return field ? connectionSize(field, variables) : 0;
  }

  let server: Server | undefined;
  return {
    stats,
    async listen(port = 0, host = '127.0.0.1') {
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      return listening.url;
    },
    close: () => closeHttp(server),
  };
}

/**
 * A twin store's customers, the same for the same count: of every 20, 12 SUBSCRIBED with a valid phone, and the others
 * one each of NOT_SUBSCRIBED, PENDING, UNSUBSCRIBED, REDACTED, no phone, two invalid phones (+1 000..., not a valid
 * number; 415-555-0000, not E.164), and a SUBSCRIBED customer sharing the phone of one 8 before it (a duplicate).
 */
export function twinCustomers(count: number, firstId = 1001): TwinCustomer[] {
  const customers: TwinCustomer[] = [];
  const phoneOf = (index: number) => `+1415555${String(index % 10_000).padStart(4, '0')}`;
  for (let index = 0; index < count; index++) {
    const slot = index % 20;
    const phone = phoneOf(index);
    const number =
      slot < 12
        ? { phoneNumber: phone, marketingState: 'SUBSCRIBED' }
        : slot === 12
          ? { phoneNumber: phone, marketingState: 'NOT_SUBSCRIBED' }
          : slot === 13
            ? { phoneNumber: phone, marketingState: 'PENDING' }
            : slot === 14
              ? { phoneNumber: phone, marketingState: 'UNSUBSCRIBED' }
              : slot === 15
                ? { phoneNumber: phone, marketingState: 'REDACTED' }
                : slot === 16
                  ? { phoneNumber: '+10005550000', marketingState: 'SUBSCRIBED' }
                  : slot === 17
                    ? null
                    : slot === 18
                      ? { phoneNumber: '415-555-0000', marketingState: 'SUBSCRIBED' }
                      : { phoneNumber: phoneOf(index - 8), marketingState: 'SUBSCRIBED' };
    customers.push({
      id: firstId + index,
      firstName: `Customer`,
      lastName: String(index + 1),
      defaultPhoneNumber: number,
    });
  }
  return customers;
}
