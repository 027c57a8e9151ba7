// `npm run migration:new -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql with the
// SQL that takes the committed migrations to prisma/schema.prisma. `prisma migrate dev` needs a shadow
// database that the pg adapter cannot manage, so the diff is taken against a throwaway cluster instead.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './stack/child-process';
import { projectRoot } from './stack/paths';
import { ensureDatabase, startEmbeddedPostgres } from './stack/postgres';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run migration:new -- <name in snake_case>');
  process.exit(64);
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'migration-pg-'));
const postgres = await startEmbeddedPostgres({
  binDir: process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin', dataDir, port: await freePort(), durable: false, quiet: true,
});
try {
  await ensureDatabase(postgres.urlFor('postgres'), 'migrations');
  const databaseUrl = postgres.urlFor('migrations');
  const prisma = (args: string[]) => execFileSync(path.join(projectRoot, 'node_modules/.bin/prisma'), args, {
    cwd: projectRoot, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'],
  }).toString();
  const sql = prisma(['migrate', 'diff', '--from-migrations', 'prisma/migrations', '--to-schema-datamodel', 'prisma/schema.prisma', '--script']);
  if (!/^\s*(CREATE|ALTER|DROP)/m.test(sql)) {
    console.log('schema.prisma matches the migrations: nothing to write');
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const dir = path.join(projectRoot, 'prisma/migrations', `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'migration.sql'), sql);
    console.log(`wrote ${path.relative(projectRoot, dir)}/migration.sql`);
  }
} finally {
  await postgres.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
