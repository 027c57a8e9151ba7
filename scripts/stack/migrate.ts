import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runStatement } from '../../lib/pg-statement';
import { projectRoot } from './paths';

const migrationsDir = path.join(projectRoot, 'prisma/migrations');

/** The key of the advisory lock Prisma's migrate takes, so a `prisma migrate deploy` at the same time waits for us. */
const PRISMA_MIGRATE_LOCK = 72707369;

/**
 * Applies committed migrations to a database of the stacks this project starts (dev, tests, benches). A database that
 * already has every migration is left alone. A new, empty one gets all of them in one transaction, recorded in
 * `_prisma_migrations` as Prisma's `migrate deploy` records them (same table, checksum = sha256 of the file), so
 * Prisma later finds nothing to apply: one transaction takes about a second where Prisma's engine, which commits each
 * migration on its own (each an fsync on a durable cluster) after loading its WASM, takes 10 to 13 s on this machine
 * (docs/benchmarks/cold-start.md). Anything else (a database part-migrated, or a migration that cannot run in a
 * transaction) goes to Prisma's own `migrate deploy`, which also reports errors in its words. Production runs Prisma's
 * command itself (the docker-compose `migrate` service).
 */
export async function migrateDeploy(databaseUrl: string): Promise<void> {
  if (await hasEveryMigration(databaseUrl)) return;
  if (await applyAllToNewDatabase(databaseUrl)) return;
  execFileSync(path.join(projectRoot, 'node_modules/.bin/prisma'), ['migrate', 'deploy'], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: 'pipe',
  });
}

function committedMigrations(directory = migrationsDir): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

async function hasEveryMigration(databaseUrl: string): Promise<boolean> {
  try {
    const rows = await runStatement<{ migration_name: string }>(
      databaseUrl,
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    return committedMigrations().every((name) => applied.has(name));
  } catch {
    return false; // No _prisma_migrations table yet: a new database.
  }
}

/** Prisma's own bookkeeping table, column for column as its schema engine creates it on PostgreSQL. */
const CREATE_PRISMA_MIGRATIONS = `CREATE TABLE "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/**
 * True when the database had no table at all and now has every migration of `directory` (the committed ones unless a
 * test names others); false, with nothing changed, otherwise.
 */
export async function applyAllToNewDatabase(databaseUrl: string, directory = migrationsDir): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [PRISMA_MIGRATE_LOCK]);
    const { rows } = await client.query<{ tables: string }>(
      `SELECT count(*) AS tables FROM pg_tables WHERE schemaname = current_schema()`,
    );
    if (Number(rows[0]!.tables) > 0) {
      await client.query('ROLLBACK');
      return false;
    }
    await client.query(CREATE_PRISMA_MIGRATIONS);
    for (const name of committedMigrations(directory)) {
      const script = readFileSync(path.join(directory, name, 'migration.sql'));
      await client.query(script.toString('utf8'));
      await client.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
         VALUES ($1, $2, now(), $3, now(), 1)`,
        [randomUUID(), createHash('sha256').update(script).digest('hex'), name],
      );
    }
    await client.query('COMMIT');
    return true;
  } catch {
    await client.query('ROLLBACK').catch(() => undefined);
    return false;
  } finally {
    await client.end();
  }
}
