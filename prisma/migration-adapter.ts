import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { runStatement } from '../lib/pg-statement';

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

/**
 * The schema engine reads pg_catalog columns of type "char", which adapter-pg cannot map ("Column type
 * 'char' could not be deserialized"). Their text values are plain strings, so they are reported as text.
 */
class CharAsTextClient extends pg.Client {
  override query(...args: unknown[]): never {
    const callbackIndex = args.findIndex((arg) => typeof arg === 'function');
    const asText = (result: pg.QueryResult | undefined) => {
      for (const field of result?.fields ?? []) if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
      return result;
    };
    if (callbackIndex >= 0) {
      const callback = args[callbackIndex] as (error: Error | null, result?: pg.QueryResult) => void;
      args[callbackIndex] = (error: Error | null, result?: pg.QueryResult) => callback(error, asText(result));
      return (super.query as (...a: unknown[]) => never)(...args);
    }
    const pending = (super.query as (...a: unknown[]) => unknown)(...args);
    return (pending instanceof Promise ? pending.then(asText) : pending) as never;
  }
}

function adapterFor(connectionString: string) {
  const factory = new PrismaPg(new pg.Pool({ connectionString, Client: CharAsTextClient }), {
    disposeExternalPool: true,
  });
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => wholeScripts(await factory.connect()),
  };
}

type PgAdapter = Awaited<ReturnType<PrismaPg['connect']>>;

/**
 * adapter-pg runs a migration script by splitting it on ";", which cuts PL/pgSQL function bodies
 * apart. PostgreSQL's simple query protocol takes the whole script at once, as Prisma's native engine
 * sends it.
 */
function wholeScripts(adapter: PgAdapter): PgAdapter {
  const pool = adapter.underlyingDriver() as pg.Pool;
  const reportError = (adapter as unknown as { onError(error: unknown): never }).onError.bind(adapter);
  adapter.executeScript = async (script: string) => {
    try {
      await pool.query(script);
    } catch (error) {
      reportError(error);
    }
  };
  return adapter;
}

/**
 * The pg driver adapter for Prisma's schema engine (migrate deploy, migrate diff). adapter-pg's own
 * shadow database reuses the main database when built from a connection string and cannot drop it
 * while its pool is open; here it is created beside the main one and dropped after its pool closed.
 */
export function migrationAdapter(databaseUrl: string) {
  const main = adapterFor(databaseUrl);
  return {
    provider: main.provider as 'postgres',
    adapterName: main.adapterName,
    connect: () => main.connect(),
    async connectToShadowDb() {
      const name = `prisma_shadow_${randomUUID().replaceAll('-', '')}`;
      await runStatement(databaseUrl, `CREATE DATABASE "${name}"`);
      const url = new URL(databaseUrl);
      url.pathname = `/${name}`;
      const adapter = await adapterFor(url.toString()).connect();
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await dispose();
        await runStatement(databaseUrl, `DROP DATABASE IF EXISTS "${name}"`);
      };
      return adapter;
    },
  };
}
