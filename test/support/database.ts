import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { createDatabase, type Database } from '../../lib/database';
import { runStatement } from '../../lib/pg-statement';

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
  await runStatement(stack.postgresAdminUrl, `CREATE DATABASE "${name}" TEMPLATE "${stack.templateDatabase}"`);
  const url = new URL(stack.postgresAdminUrl);
  url.pathname = `/${name}`;
  const db = createDatabase(url.toString());
  afterAll(async () => {
    await db.$disconnect();
    await runStatement(stack.postgresAdminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
  return { url: url.toString(), db };
}
