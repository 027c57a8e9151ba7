import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

export type Database = PrismaClient;

export function createDatabase(databaseUrl: string, options: { poolSize?: number } = {}): Database {
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    // Fail fast when PostgreSQL is unreachable so requests answer 503 instead of hanging.
    connectionTimeoutMillis: 3_000,
  });
  return new PrismaClient({ adapter });
}
