// Prisma's native schema engine is downloaded from a host these machines cannot reach, so migrations
// run through the WASM schema engine that ships in the npm package, driven by the pg driver adapter.
import { defineConfig } from 'prisma/config';
import { migrationAdapter } from './prisma/migration-adapter';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => migrationAdapter(requireDatabaseUrl()),
});

function requireDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run prisma through `npm start`, `npm test` or export it');
  return url;
}
