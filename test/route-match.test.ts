import { describe, expect, it } from 'vitest';
import { matchRoute, pathPattern, type HttpMethod, type RouteDefinition } from '../api/http/route';
import { routes } from '../api/routes';

/** matchRoute as it was before its candidates were indexed by segment count: every pattern of the table tested. */
function matchEveryPattern(table: readonly RouteDefinition[], method: string, pathname: string) {
  const wanted = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const count = (path: string) => path.split('{').length - 1;
  const matching = table.filter((route) => pathPattern(route.path).test(pathname));
  const fewest = Math.min(...matching.map((route) => count(route.path)));
  const onPath = matching.filter((route) => count(route.path) === fewest);
  const route = onPath.find((candidate) => candidate.method === wanted);
  if (route) return { route };
  return { route: null, allowed: onPath.length ? [...new Set(onPath.map((candidate) => candidate.method))] : null };
}

const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Every template of the table made concrete, plus trailing slashes, other cases, a segment more or fewer. */
const paths = [
  ...new Set(
    routes.flatMap((route) => {
      const concrete = route.path.replace(/\{\w+\}/g, '0b6f1f6e-1d1e-4a43-9a59-3c8a3c5c2f10');
      return [
        concrete,
        `${concrete}/`,
        concrete.toUpperCase(),
        `${concrete}/extra`,
        concrete.split('/').slice(0, -1).join('/') || '/',
        route.path.replace(/\{\w+\}/g, 'purchase'),
      ];
    }),
  ),
  '/',
  '//',
  '',
  '/v1//campaigns',
  `/${'a/'.repeat(40)}`,
];

describe('matchRoute (candidates by segment count)', () => {
  it('picks what testing every pattern of the table picks, for every route path and its variants', () => {
    for (const pathname of paths)
      for (const method of [...METHODS, 'head', 'options'])
        expect(matchRoute(routes, method, pathname), `${method} ${pathname}`).toEqual(
          matchEveryPattern(routes, method, pathname),
        );
  });

  it('keeps a table of its own for each route list', () => {
    const only = routes.filter((route) => route.path === '/health');
    const batch = '/v1/campaigns/0b6f1f6e-1d1e-4a43-9a59-3c8a3c5c2f10/leads/batch';
    expect(matchRoute(only, 'post', batch).route).toBeNull();
    expect(matchRoute(routes, 'post', batch).route?.path).toBe('/v1/campaigns/{campaignId}/leads/batch');
    expect(matchRoute(only, 'get', '/health').route?.path).toBe('/health');
  });
});
