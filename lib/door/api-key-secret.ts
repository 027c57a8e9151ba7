import { createHash, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'wsk_';

/** 256 random bits: a hash of it is as good as a slow KDF, and costs microseconds per request. */
export function generateApiKeySecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function displayPrefixOf(secret: string): string {
  return secret.slice(0, SECRET_PREFIX.length + 6);
}
