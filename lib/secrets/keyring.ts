import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * The keys secrets at rest are sealed with (SECRETS_KEYS, docs/features/carriers/connections.md#the-key-ring):
 * `id:base64,id:base64`, the first the current one. Every envelope records the id of its key, so a key
 * stays in the ring, after the current one, until `carrier rekey` has moved every envelope off it.
 */
export interface Keyring {
  /** The id new envelopes are sealed under. */
  readonly currentKeyId: string;
  /** Every key by id: 32 bytes each (AES-256). */
  readonly keys: ReadonlyMap<string, Buffer>;
  /** The keys as written in the variable, for the logger's scrubbing by value (lib/log.ts secretsOfConfig). */
  readonly encoded: readonly string[];
}

export const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * SECRETS_KEYS as zod parses it. Messages name the entry by position and id, never the key: a
 * configuration error is printed and logged.
 */
export const keyringSchema = z.string().transform((value, context): Keyring => {
  const entries = value.split(',').map((entry) => entry.trim());
  const keys = new Map<string, Buffer>();
  const encoded: string[] = [];
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':');
    const id = separator < 0 ? '' : entry.slice(0, separator);
    const key = separator < 0 ? '' : entry.slice(separator + 1);
    const problem = !KEY_ID.test(id)
      ? `entry ${index + 1} must be <id>:<base64 key>, the id 1 to 32 of A-Z a-z 0-9 _ -`
      : keys.has(id)
        ? `key id "${id}" is given twice`
        : !BASE64.test(key) || Buffer.from(key, 'base64').length !== KEY_BYTES
          ? `key "${id}" must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 ${KEY_BYTES})`
          : null;
    if (problem) {
      context.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    keys.set(id, Buffer.from(key, 'base64'));
    encoded.push(key);
  }
  return Object.freeze({ currentKeyId: entries[0]!.split(':')[0]!, keys, encoded: Object.freeze(encoded) });
});

/** A new key ring entry: a random key under `id` (the dev stack's generated key, tests). */
export const newKeyringEntry = (id: string): string => `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
