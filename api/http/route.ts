import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { RouteAccess } from '../auth/access';
import type { Principal } from '../auth/principal';
import type { AppServices } from '../services';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteContext<Body, Params, Query> {
  body: Body;
  params: Params;
  query: Query;
  principal: Principal;
  requestId: string;
  services: AppServices;
  req: Request;
  res: Response;
}

/** One route: its path, what it requires, the schemas it validates with, and a few-line handler. */
export interface RouteDefinition<
  Body extends z.ZodType = z.ZodType,
  Params extends z.ZodType = z.ZodType,
  Query extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** OpenAPI-style path: /v1/campaigns/{campaignId}/leads. */
  path: string;
  access: RouteAccess;
  summary: string;
  tags?: string[];
  body?: Body;
  params?: Params;
  query?: Query;
  /** Request headers the route reads, for the OpenAPI description. */
  headerParameters?: Array<{ name: string; description: string }>;
  /** Status of a failed validation: 400 unless the spec says otherwise (422 on the single lead push). */
  validationStatus?: 400 | 422;
  /** Response schemas by status, for the OpenAPI description. */
  responses?: Record<number, { description: string; schema?: z.ZodType }>;
  handler: (context: RouteContext<z.infer<Body>, z.infer<Params>, z.infer<Query>>) => Promise<Reply>;
}

export function defineRoute<Body extends z.ZodType, Params extends z.ZodType, Query extends z.ZodType>(
  route: RouteDefinition<Body, Params, Query>,
): RouteDefinition {
  return route as unknown as RouteDefinition;
}

/** /v1/campaigns/{campaignId} -> /v1/campaigns/:campaignId */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}
