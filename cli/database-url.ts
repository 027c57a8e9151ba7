import { readFileSync } from 'node:fs';
import { devStackStatePath } from '../scripts/stack/paths';

/** DATABASE_URL wins; otherwise the database of the running or last `npm start` stack. */
export function resolveDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  try {
    const state = JSON.parse(readFileSync(devStackStatePath, 'utf8')) as { databaseUrl?: string };
    if (state.databaseUrl) return state.databaseUrl;
  } catch {
    // Fall through to the message below.
  }
  throw new Error('DATABASE_URL is not set and no `npm start` stack was found');
}
