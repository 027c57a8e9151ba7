import type { Database } from '../lib/database';
import type { Telephony } from './providers/telephony';
import { createCallActivities } from './calls';

export interface ActivityDependencies {
  db: Database;
  calls: Telephony;
}

/** Every activity, bound to its dependencies. The worker wires in the real ones; tests pass their own. */
export function createActivities(dependencies: ActivityDependencies) {
  return {
    ...createCallActivities(dependencies),
  };
}

export type Activities = ReturnType<typeof createActivities>;
