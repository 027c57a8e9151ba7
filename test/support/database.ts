import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { createDatabase, type Database } from '../../lib/database';

export interface TestDatabase {
  url: string;
  db: Database;
}

/**
 * A database of its own for one test file, cloned from the migrated template (milliseconds), dropped
 * when the file is done.
 */
export async function useTestDatabase(): Promise<TestDatabase> {
  const stack = inject('stack');
  const name = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(stack.postgresAdminUrl, `CREATE DATABASE "${name}" TEMPLATE "${stack.templateDatabase}"`);
  const url = new URL(stack.postgresAdminUrl);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString());
  afterAll(async () => {
    await db.$disconnect();
    await adminQuery(stack.postgresAdminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
  return { url: url.toString(), db };
}

async function adminQuery(adminUrl: string, statement: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
