import { createAdminApiClient } from '@shopify/admin-api-client';
import { cappedFetch } from '../http/capped-fetch';
import { normalizeE164 } from '../phone';
import type { OpenedAdminConnection } from './admin-token';

/*
 * Reading a store's customers through Shopify's Admin GraphQL API (docs/features/crm.md#importing-through-the-admin-api),
 * with Shopify's own client. The same code reads a real store and the store twin: only the base URL (the twin's,
 * through customFetchApi) and the token differ.
 */

export const SHOPIFY_ADMIN_API_VERSION = '2025-04';

/** Customers per page: Shopify's maximum for a connection is 250. */
export const CUSTOMERS_PAGE_SIZE = 250;

/** The one query the import sends; validated against the vendored Admin schema in test/crm/shopify-admin-twin.test.ts. */
export const CUSTOMERS_QUERY = `#graphql
  query CrmImportCustomers($first: Int!, $after: String) {
    customers(first: $first, after: $after) {
      nodes {
        id
        displayName
        defaultPhoneNumber {
          phoneNumber
          marketingState
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`;

export interface ShopifyCustomer {
  id: string;
  displayName: string;
  defaultPhoneNumber: { phoneNumber: string; marketingState: string } | null;
}

/** extensions.cost of an Admin API answer (Shopify's calculated query cost). */
export interface QueryCost {
  requestedQueryCost: number;
  actualQueryCost?: number | null;
  throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}

export type CustomersPage =
  | {
      kind: 'page';
      customers: ShopifyCustomer[];
      hasNextPage: boolean;
      endCursor: string | null;
      cost: QueryCost | null;
    }
  /** Shopify answered THROTTLED: nothing read; wait (throttleWaitMs) and ask again. */
  | { kind: 'throttled'; cost: QueryCost | null };

/** The store refused the token (401/403): retrying does not help. */
export class AdminAccessRefused extends Error {}

/**
 * How long to wait before a query of `requestedQueryCost` fits in the bucket: nothing while currentlyAvailable covers
 * it, else the missing points at restoreRate (points per second). Unknown cost: one second.
 */
export function throttleWaitMs(cost: QueryCost | null, requestedQueryCost: number): number {
  if (!cost) return 1000;
  const { currentlyAvailable, restoreRate } = cost.throttleStatus;
  if (currentlyAvailable >= requestedQueryCost) return 0;
  return Math.ceil(((requestedQueryCost - currentlyAvailable) / Math.max(restoreRate, 0.001)) * 1000);
}

/**
 * One Admin API request (a page of at most 250 customers or orders) answers within seconds; past 30 s the store (or
 * the path to it) is taken as hung: the request is aborted and fails, and the import's activity is retried instead of
 * waiting for as long as the socket stays open.
 */
export const SHOPIFY_ADMIN_TIMEOUT_MS = 30_000;

/**
 * The most of an Admin API answer read. The largest the product asks for is a page of 250 customers (CUSTOMERS_QUERY:
 * an id, a name and a phone each, some 300 bytes, about 75 KB with GraphQL's framing); a store's names can be long and
 * the query may grow fields, so 8 MiB leaves a hundredfold room. Past it the request fails (`EBODYCAP`) and the import's
 * activity fails, instead of a broken store or twin filling the worker's memory.
 */
export const SHOPIFY_ADMIN_BODY_CAP_BYTES = 8 * 1024 * 1024;

/**
 * Every request with its deadline (SHOPIFY_ADMIN_TIMEOUT_MS, joined to any signal of the caller's); requests to
 * https://{shop} go to the twin's base URL instead (shopify-twin), a real store keeps its address. Answers are capped
 * (SHOPIFY_ADMIN_BODY_CAP_BYTES).
 */
function fetchFor(connection: OpenedAdminConnection, timeoutMs: number, capBytes: number): typeof fetch {
  const storeOrigin = `https://${connection.shopDomain}`;
  const base =
    connection.provider === 'shopify-twin' && connection.baseUrl ? connection.baseUrl.replace(/\/+$/, '') : null;
  const capped = cappedFetch(capBytes);
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const deadline = AbortSignal.timeout(timeoutMs);
    return capped(base && url.startsWith(storeOrigin) ? base + url.slice(storeOrigin.length) : url, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline,
    });
  };
}

export function shopifyAdminClient(
  connection: OpenedAdminConnection,
  timeoutMs = SHOPIFY_ADMIN_TIMEOUT_MS,
  capBytes = SHOPIFY_ADMIN_BODY_CAP_BYTES,
) {
  return createAdminApiClient({
    storeDomain: connection.shopDomain,
    apiVersion: SHOPIFY_ADMIN_API_VERSION,
    accessToken: connection.accessToken,
    retries: 0,
    customFetchApi: fetchFor(connection, timeoutMs, capBytes),
    // The client warns on the console about versions it no longer lists; the version is pinned on purpose.
    logger: () => undefined,
  });
}

interface GraphQLErrorShape {
  message?: string;
  extensions?: { code?: string };
}

/** One page of customers after `after` (null: the first page). */
export async function readCustomersPage(
  connection: OpenedAdminConnection,
  after: string | null,
  first = CUSTOMERS_PAGE_SIZE,
  timeoutMs = SHOPIFY_ADMIN_TIMEOUT_MS,
): Promise<CustomersPage> {
  const client = shopifyAdminClient(connection, timeoutMs);
  const answer = await client.request<{
    customers: { nodes: ShopifyCustomer[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  }>(CUSTOMERS_QUERY, { variables: { first, after } });
  const cost = ((answer.extensions as { cost?: QueryCost } | undefined)?.cost ?? null) as QueryCost | null;
  const graphQLErrors = (answer.errors?.graphQLErrors ?? []) as GraphQLErrorShape[];
  if (graphQLErrors.some((error) => error.extensions?.code === 'THROTTLED')) return { kind: 'throttled', cost };
  const status = answer.errors?.networkStatusCode;
  if (status === 401 || status === 403)
    throw new AdminAccessRefused(`the store refused the Admin API access token (HTTP ${status})`);
  if (answer.errors || !answer.data) {
    const detail = graphQLErrors.map((error) => error.message).join('; ') || answer.errors?.message || 'no data';
    throw new Error(`the Admin API answered ${status ?? ''} ${detail}`.replace(/\s+/g, ' ').trim());
  }
  const { nodes, pageInfo } = answer.data.customers;
  return { kind: 'page', customers: nodes, hasNextPage: pageInfo.hasNextPage, endCursor: pageInfo.endCursor, cost };
}

/** The SMS marketing state that lets a customer be imported (docs/features/crm.md#the-consent-states-honoured). */
export const IMPORTED_MARKETING_STATE = 'SUBSCRIBED';

export type CustomerVerdict = { import: true; phone: string } | { import: false; reason: string };

/**
 * Whether a customer is imported: a default phone that is a valid E.164 number, whose SMS marketing state is
 * SUBSCRIBED. Any other state (NOT_SUBSCRIBED, PENDING, UNSUBSCRIBED, REDACTED, or one Shopify adds later, such as
 * INVALID) is skipped under its own name; no phone: no_phone; a phone that is not valid E.164: invalid_phone.
 */
export function customerVerdict(customer: ShopifyCustomer): CustomerVerdict {
  const number = customer.defaultPhoneNumber;
  if (!number?.phoneNumber) return { import: false, reason: 'no_phone' };
  const phone = number.phoneNumber.trim().startsWith('+') ? normalizeE164(number.phoneNumber) : null;
  if (!phone) return { import: false, reason: 'invalid_phone' };
  if (number.marketingState !== IMPORTED_MARKETING_STATE)
    return {
      import: false,
      reason: /^[A-Z_]{1,40}$/.test(number.marketingState) ? number.marketingState : 'unknown_state',
    };
  return { import: true, phone };
}
