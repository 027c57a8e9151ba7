import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateDeploy } from '../scripts/stack/migrate';
import { freePort } from '../scripts/stack/child-process';
import { ensureDatabase, startEmbeddedPostgres } from '../scripts/stack/postgres';

export interface BenchPostgres {
  /** A scratch folder of this run, removed by stop(). */
  workDir: string;
  /** The migrated database `bench`. */
  url: string;
  stop(): Promise<void>;
}

/** A durable embedded PostgreSQL in a scratch folder, with the database `bench` migrated, for benches that need only the database. */
export async function startBenchPostgres(prefix: string): Promise<BenchPostgres> {
  const workDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  // The postgres system user runs the server and must reach its data folder inside.
  chmodSync(workDir, 0o711);
  const postgres = await startEmbeddedPostgres({
    binDir: process.env.PG_BIN_DIR!,
    dataDir: path.join(workDir, 'pg'),
    port: await freePort(),
    durable: true,
    quiet: true,
  });
  const stop = async () => {
    await postgres.stop();
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await ensureDatabase(postgres.urlFor('postgres'), 'bench');
    await migrateDeploy(postgres.urlFor('bench'));
  } catch (error) {
    await stop();
    throw error;
  }
  return { workDir, url: postgres.urlFor('bench'), stop };
}
