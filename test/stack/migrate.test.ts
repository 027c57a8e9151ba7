// The stacks' fast migration (scripts/stack/migrate.ts): a new database gets every committed migration in one
// transaction, recorded as Prisma records them. Proven against Prisma's own `migrate deploy` on the real PostgreSQL:
// the same schema to the byte of pg_dump, the same bookkeeping, and Prisma finds nothing left to apply after it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { runStatement } from '../../lib/pg-statement';
import { applyAllToNewDatabase } from '../../scripts/stack/migrate';
import { projectRoot } from '../../scripts/stack/paths';
import { atTestEnd, execTestProcess } from '../support/processes';

const stack = inject('stack');
const prisma = path.join(projectRoot, 'node_modules/.bin/prisma');

/** An empty database of this test's own (from template0: not even the migrated template's tables). */
async function emptyDatabase(): Promise<string> {
  const name = `migrate_${Math.random().toString(16).slice(2, 10)}`;
  await runStatement(stack.postgresAdminUrl, `CREATE DATABASE "${name}" TEMPLATE template0`);
  atTestEnd(() => runStatement(stack.postgresAdminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  const url = new URL(stack.postgresAdminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const runPrisma = (databaseUrl: string, ...args: string[]) =>
  execTestProcess(prisma, args, {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    timeoutMs: 180_000,
  });

async function schemaDump(databaseUrl: string): Promise<string> {
  const { stdout } = await execTestProcess(
    path.join(process.env.PG_BIN_DIR!, 'pg_dump'),
    ['--schema-only', '--no-owner', '--no-privileges', databaseUrl],
    { timeoutMs: 120_000 },
  );
  // The dump names no database; only pg_dump's own header lines (its version, a restrict key) may differ.
  return stdout
    .split('\n')
    .filter((line) => !line.startsWith('\\restrict') && !line.startsWith('\\unrestrict'))
    .join('\n');
}

const bookkeeping = (databaseUrl: string) =>
  runStatement<{ migration_name: string; checksum: string; applied_steps_count: number; done: boolean }>(
    databaseUrl,
    `SELECT migration_name, checksum, applied_steps_count, logs IS NULL AND rolled_back_at IS NULL
            AND finished_at IS NOT NULL AS done
       FROM _prisma_migrations ORDER BY migration_name`,
  );

describe('migrating a new database in one transaction', () => {
  it("gives the schema and the bookkeeping of Prisma's migrate deploy, and leaves Prisma nothing to apply", async () => {
    const fast = await emptyDatabase();
    const byPrisma = await emptyDatabase();
    expect(await applyAllToNewDatabase(fast)).toBe(true);
    await runPrisma(byPrisma, 'migrate', 'deploy');

    expect(await schemaDump(fast)).toBe(await schemaDump(byPrisma));
    const ours = await bookkeeping(fast);
    expect(ours.length).toBeGreaterThan(50);
    expect(ours).toEqual(await bookkeeping(byPrisma));

    const after = await runPrisma(fast, 'migrate', 'deploy');
    expect(after.stdout).toContain('No pending migrations to apply');
    const status = await runPrisma(fast, 'migrate', 'status');
    expect(status.stdout).toContain('Database schema is up to date');
  });

  it('leaves a database that has a table alone', async () => {
    const url = await emptyDatabase();
    await runStatement(url, 'CREATE TABLE someone_elses (id int)');
    expect(await applyAllToNewDatabase(url)).toBe(false);
    expect(await runStatement(url, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).toEqual([
      { tablename: 'someone_elses' },
    ]);
  });

  it('changes nothing when a migration fails, so Prisma can apply them and report the failure', async () => {
    const url = await emptyDatabase();
    const directory = mkdtempSync(path.join(tmpdir(), 'migrations-'));
    atTestEnd(() => rmSync(directory, { recursive: true, force: true }));
    const write = (name: string, sql: string) => {
      mkdirSync(path.join(directory, name));
      writeFileSync(path.join(directory, name, 'migration.sql'), sql);
    };
    write('20260101000000_good', 'CREATE TABLE "Good" (id int);');
    write('20260101000001_bad', 'ALTER TABLE "Missing" ADD COLUMN x int;');
    expect(await applyAllToNewDatabase(url, directory)).toBe(false);
    expect(await runStatement(url, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).toEqual([]);
  });
});
