// `npm run migration:new -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql with the
// SQL that takes the committed migrations to prisma/schema.prisma. `prisma migrate dev` needs a shadow
// database that the pg adapter cannot manage, so the diff is taken against a throwaway cluster instead.
// `npm run migration:new -- <name> --empty`: a migration for SQL written by hand (a data repair), as
// `prisma migrate dev --create-only` makes one; only when the schema holds no change of its own.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './stack/child-process';
import { projectRoot } from './stack/paths';
import { ensureDatabase, startEmbeddedPostgres } from './stack/postgres';

/**
 * Indexes the migrations create by hand because schema.prisma cannot state them (partial indexes). Prisma's diff
 * sees them as strays and drops them: their drops are left out of every generated migration.
 */
const HAND_WRITTEN_INDEXES = [
  'ResultWebhookDelivery_retrying_idx',
  'CrmWebhookDelivery_received_idx',
  'LineQueue_granted_idx',
  'Lead_undispatched_idx',
  'CreditLedgerEntry_abandoned_idx',
];
const withoutHandWrittenIndexDrops = (sql: string) =>
  sql
    .split('\n')
    .filter((line) => !HAND_WRITTEN_INDEXES.some((index) => line.trim() === `DROP INDEX "${index}";`))
    .join('\n');

const [name, ...flags] = process.argv.slice(2);
const empty = flags.includes('--empty');
if (!name || !/^[a-z0-9_]+$/.test(name) || flags.some((flag) => flag !== '--empty')) {
  console.error('usage: npm run migration:new -- <name in snake_case> [--empty]');
  process.exit(64);
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'migration-pg-'));
const postgres = await startEmbeddedPostgres({
  binDir: process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin',
  dataDir,
  port: await freePort(),
  durable: false,
  quiet: true,
});
try {
  await ensureDatabase(postgres.urlFor('postgres'), 'migrations');
  const databaseUrl = postgres.urlFor('migrations');
  const prisma = (args: string[]) =>
    execFileSync(path.join(projectRoot, 'node_modules/.bin/prisma'), args, {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
  const sql = withoutHandWrittenIndexDrops(
    prisma([
      'migrate',
      'diff',
      '--from-migrations',
      'prisma/migrations',
      '--to-schema-datamodel',
      'prisma/schema.prisma',
      '--script',
    ]),
  );
  const schemaChanged = /^\s*(CREATE|ALTER|DROP)/m.test(sql);
  if (empty && schemaChanged) {
    console.error('schema.prisma has changes no migration holds yet: make that migration first (without --empty)');
    process.exitCode = 65;
  } else if (!schemaChanged && !empty) {
    console.log(
      'schema.prisma matches the migrations: nothing to write (--empty makes a migration for SQL written by hand)',
    );
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const dir = path.join(projectRoot, 'prisma/migrations', `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'migration.sql'),
      empty
        ? '-- Written by hand: schema.prisma needs no change for it. `prisma migrate deploy` applies it once.\n'
        : sql,
    );
    console.log(`wrote ${path.relative(projectRoot, dir)}/migration.sql`);
  }
} finally {
  await postgres.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
