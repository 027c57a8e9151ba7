import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { runStatement } from '../../lib/pg-statement';
import { projectRoot } from './paths';

const migrationsDir = path.join(projectRoot, 'prisma/migrations');

/**
 * Applies committed migrations with Prisma's own `migrate deploy`. Its WASM schema engine takes
 * seconds to load, so a database that already has every migration is left alone.
 */
export async function migrateDeploy(databaseUrl: string): Promise<void> {
  if (await hasEveryMigration(databaseUrl)) return;
  execFileSync(path.join(projectRoot, 'node_modules/.bin/prisma'), ['migrate', 'deploy'], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: 'pipe',
  });
}

async function hasEveryMigration(databaseUrl: string): Promise<boolean> {
  const committed = readdirSync(migrationsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  try {
    const rows = await runStatement<{ migration_name: string }>(
      databaseUrl,
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    return committed.every((name) => applied.has(name));
  } catch {
    return false; // No _prisma_migrations table yet: a new database.
  }
}
