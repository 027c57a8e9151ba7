import type { z } from 'zod';
import type { RouteDefinition } from '../../api/http/route';
import { declaredResponses } from '../../api/openapi/declared-responses';

/** One string schema inside a route's schema, and where: "POST /v1/leads body.leads[].name". */
export interface StringSite {
  where: string;
  schema: z.core.$ZodType;
}

type Def = Record<string, unknown> & { type: string };
const defOf = (schema: z.core.$ZodType) => schema._zod.def as unknown as Def;

/**
 * Every string schema reachable from `schema` (through objects, arrays, unions, wrappers, pipes and lazy schemas), once
 * for each place it is used, as the description publishes it once for each place.
 */
export function stringSchemasIn(schema: z.core.$ZodType, where: string): StringSite[] {
  const found: StringSite[] = [];
  // The schemas being visited: a recursive (lazy) schema is walked once down each path, not forever.
  const enclosing = new Set<z.core.$ZodType>();
  const visit = (node: z.core.$ZodType | undefined, at: string): void => {
    if (!node || enclosing.has(node)) return;
    enclosing.add(node);
    visitChildren(node, at);
    enclosing.delete(node);
  };
  const visitChildren = (node: z.core.$ZodType, at: string): void => {
    const def = defOf(node);
    const child = (key: string, suffix = ''): void => visit(def[key] as z.core.$ZodType | undefined, at + suffix);
    switch (def.type) {
      case 'string':
        found.push({ where: at, schema: node });
        return;
      case 'object':
        for (const [key, value] of Object.entries(def.shape as Record<string, z.core.$ZodType>))
          visit(value, `${at}.${key}`);
        return child('catchall', '.*');
      case 'array':
        return child('element', '[]');
      case 'set':
        return child('valueType', '[]');
      case 'record':
      case 'map':
        child('keyType', '{key}');
        return child('valueType', '{}');
      case 'tuple':
        (def.items as z.core.$ZodType[]).forEach((item, index) => visit(item, `${at}[${index}]`));
        return child('rest', '[]');
      case 'union':
        (def.options as z.core.$ZodType[]).forEach((option, index) => visit(option, `${at}|${index}`));
        return;
      case 'intersection':
        child('left');
        return child('right');
      case 'pipe':
        child('in');
        return child('out');
      case 'lazy':
        return visit((def.getter as () => z.core.$ZodType)(), at);
      default:
        return child('innerType');
    }
  };
  visit(schema, where);
  return found;
}

/** The string schemas of every route: its path parameters, query, body and the schemas of its declared responses. */
export function routeStringSchemas(routes: readonly RouteDefinition[]): StringSite[] {
  return routes.flatMap((route) => {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    return [
      ...(route.params ? stringSchemasIn(route.params, `${name} params`) : []),
      ...(route.query ? stringSchemasIn(route.query, `${name} query`) : []),
      ...(route.body ? stringSchemasIn(route.body, `${name} body`) : []),
      ...Object.entries(declaredResponses(route)).flatMap(([status, response]) =>
        response.schema ? stringSchemasIn(response.schema, `${name} ${status}`) : [],
      ),
    ];
  });
}
