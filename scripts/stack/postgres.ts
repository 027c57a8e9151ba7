import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { runStatement } from '../../lib/pg-statement';
import { startProcess, waitFor, type ManagedProcess } from './child-process';

export interface EmbeddedPostgresOptions {
  binDir: string;
  dataDir: string;
  port: number;
  /** Throwaway clusters (tests) trade crash safety for speed. */
  durable: boolean;
  quiet?: boolean;
}

export interface EmbeddedPostgres {
  readonly port: number;
  urlFor(database: string): string;
  stop(): Promise<void>;
  readonly process: ManagedProcess;
}

const SUPERUSER = 'postgres';
const runningAsRoot = process.getuid?.() === 0;

/** initdb and postgres refuse to run as root: as root, they run as the `postgres` system user. */
const clusterOwner = runningAsRoot ? ['--reuid=postgres', '--regid=postgres', '--init-groups'] : [];

function ownedByClusterUser(dir: string) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (runningAsRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { binDir, dataDir, port } = options;
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    ownedByClusterUser(dataDir);
    execFileSync(
      'setpriv',
      [
        ...clusterOwner,
        '--',
        path.join(binDir, 'initdb'),
        '-D',
        dataDir,
        '-U',
        SUPERUSER,
        '--auth=trust',
        '--encoding=UTF8',
        '--no-locale',
        '--no-sync',
      ],
      { stdio: 'pipe' },
    );
  }
  const settings = [
    '-c',
    'max_connections=200',
    ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ];
  const server = startProcess(
    'postgres',
    path.join(binDir, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dataDir, ...settings],
    { quiet: options.quiet, parentDeathSignal: 'SIGINT', setpriv: clusterOwner },
  );
  const urlFor = (database: string) => `postgresql://${SUPERUSER}@127.0.0.1:${port}/${database}`;
  await waitFor('PostgreSQL', () => runStatement(urlFor('postgres'), 'SELECT 1'), 30_000, server.exited);
  return {
    port,
    urlFor,
    process: server,
    // SIGINT is PostgreSQL's "fast" shutdown: clients are disconnected, data is flushed.
    stop: () => server.stop('SIGINT', 20_000),
  };
}

export async function ensureDatabase(adminUrl: string, database: string, template?: string): Promise<void> {
  const existing = await runStatement(adminUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (existing.length === 0) {
    await runStatement(adminUrl, `CREATE DATABASE "${database}"${template ? ` TEMPLATE "${template}"` : ''}`);
  }
}
