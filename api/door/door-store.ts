import type { Plan } from '../../lib/door/workspace-admin';
import type { Role } from '../../lib/door/roles';
import type { SqlPool } from '../../lib/sql-pool';

/**
 * The door's SQL (docs/features/door.md): one call of a SQL function per request, a prepared statement on the plain
 * pool (door_admit and rate_limit_take, prisma/migrations/).
 */

/** The key, its member and workspace as they are now, and what the request took from the key's bucket. */
export interface DoorRow {
  key_id: string;
  workspace_id: string;
  member_id: string;
  scoped: boolean;
  scopes: string[];
  member_role: Role;
  member_status: string;
  workspace_status: string;
  plan: Plan;
  features: string[];
  rate_limit: number;
  allowed: boolean;
  remaining: number;
  reset_ms: number;
}

/** The key of this secret hash, admitted (or not) by its rolling-window bucket; undefined: no such live key. */
export async function admitKey(
  sql: SqlPool,
  secretHash: string,
  defaultLimit: number,
  windowMs: number,
): Promise<DoorRow | undefined> {
  const {
    rows: [row],
  } = await sql.query<DoorRow>({
    name: 'door_admit',
    text: 'SELECT * FROM door_admit($1, $2, $3)',
    values: [secretHash, defaultLimit, windowMs],
  });
  return row;
}

/** One request taken from the rolling-window bucket `bucket`, shared by every API process. */
export async function takeFromBucketRow(sql: SqlPool, bucket: string, limit: number, windowMs: number) {
  const {
    rows: [row],
  } = await sql.query<{ allowed: boolean; remaining: number; reset_ms: number }>({
    name: 'rate_limit_take',
    text: 'SELECT * FROM rate_limit_take($1, $2, $3)',
    values: [bucket, limit, windowMs],
  });
  return row!;
}
