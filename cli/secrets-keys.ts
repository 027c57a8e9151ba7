import { existsSync, readFileSync } from 'node:fs';
import { parseSecretsKeys } from '../lib/config';
import { requireKeyring } from '../lib/carrier-connections/connections';
import type { Keyring } from '../lib/secrets/keyring';
import { devSecretsKeysPath } from '../scripts/stack/paths';

/**
 * The key ring carrier secrets are sealed with: SECRETS_KEYS wins; otherwise the development ring of the
 * `npm start` stack (.data/secrets-keys), as DATABASE_URL falls back to that stack's database.
 */
export function resolveKeyring(env: NodeJS.ProcessEnv = process.env): Keyring {
  const fromDevStack =
    env.SECRETS_KEYS === undefined && existsSync(devSecretsKeysPath)
      ? readFileSync(devSecretsKeysPath, 'utf8').trim()
      : undefined;
  return requireKeyring(parseSecretsKeys(fromDevStack ? { SECRETS_KEYS: fromDevStack } : env));
}
