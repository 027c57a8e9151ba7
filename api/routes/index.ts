import type { RouteDefinition } from '../http/route';
import { campaignRoutes } from './campaigns';
import { healthRoutes } from './health';
import { leadRoutes } from './leads';

/** Every route of the service. Each one declares its access rule next to its definition. */
export const routes: readonly RouteDefinition[] = [...healthRoutes, ...campaignRoutes, ...leadRoutes];
