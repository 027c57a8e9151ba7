import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from './paths';

/** Applies committed migrations with Prisma's own `migrate deploy`. */
export function migrateDeploy(databaseUrl: string): void {
  execFileSync(path.join(projectRoot, 'node_modules/.bin/prisma'), ['migrate', 'deploy'], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: 'pipe',
  });
}
