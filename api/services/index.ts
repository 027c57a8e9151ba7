import type { Client, Connection } from '@temporalio/client';
import type { Database } from '../../lib/database';
import type { SqlPool } from '../../lib/sql-pool';
import type { LeadDispatcher } from './lead-dispatch';

/** What handlers reach: the database and Temporal. Built once per process in api/main.ts. */
export interface AppServices {
  db: Database;
  /** Plain SQL for the door (authentication and rate limit) of every request. */
  sql: SqlPool;
  temporal: Client;
  temporalConnection: Connection;
  taskQueue: string;
  /** Starts the workflows of stored leads (the outbox of lead intake). */
  leadDispatcher: LeadDispatcher;
  /** Requests per rolling minute per key where the workspace sets no limit of its own. */
  defaultRateLimitPerMinute: number;
}
