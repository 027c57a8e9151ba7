import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { routes } from '../../api/routes';
import type { AppServices } from '../../api/app-services';

interface Layer {
  route?: {
    path: string;
    methods: Record<string, boolean>;
    stack: Array<{ handle: { access?: unknown; name?: string } }>;
  };
}

// The router is walked without serving a request, so no service is reached.
const app = createApp({} as AppServices);
const layers = (app as unknown as { router: { stack: Layer[] } }).router.stack;

describe('every route declares who may call it', () => {
  const registered = layers.filter((layer) => layer.route).map((layer) => layer.route!);

  it('registers every route definition, and only those', () => {
    expect(registered.length).toBe(routes.length);
  });

  it.each(
    registered.map((route) => [`${Object.keys(route.methods).join(',').toUpperCase()} ${route.path}`, route] as const),
  )('%s has an access rule in front of its handler', (_name, route) => {
    // First the check that this route is the one the path picks (a concrete path before a template), then the door.
    expect(route.stack[0]?.handle.name).toBe('pickedHere');
    const access = route.stack[1]?.handle.access as Record<string, unknown> | undefined;
    expect(access).toBeDefined();
    const kinds = ['public', 'keysRefused', 'permission'].filter((kind) => kind in access!);
    expect(kinds).toHaveLength(1);
  });
});
