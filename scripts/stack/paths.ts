import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The checkout (or the image's /app): the nearest folder above this file with a package.json, so that the
 * compiled copy in dist/scripts/stack finds the same root as the source in scripts/stack. */
function findProjectRoot(start: string): string {
  for (let dir = start; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  throw new Error(`no package.json above ${start}`);
}

export const projectRoot = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
/** Git-ignored state of `npm start`: database cluster, Temporal store, the dev key. */
export const devDataDir = path.resolve(process.env.WORKSPACE_DATA_DIR ?? path.join(projectRoot, '.data'));
export const devStackStatePath = path.join(devDataDir, 'dev-stack.json');
export const devApiKeyPath = path.join(devDataDir, 'dev-api-key');
/**
 * The development key ring (SECRETS_KEYS) `npm start` makes on its first run and the operator CLI reads when
 * SECRETS_KEYS is not set: mode 600, beside the database whose carrier secrets it seals (docs/features/carriers.md).
 */
export const devSecretsKeysPath = path.join(devDataDir, 'secrets-keys');
/** The private key of the Google Sheets twin's development service account (never a key Google issued), mode 600. */
export const devGoogleTwinKeyPath = path.join(devDataDir, 'google-twin-dev-key.pem');
