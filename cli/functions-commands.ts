import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Database } from '../lib/database';
import { functionDefinitionSchema } from '../lib/functions/function-definition';
import { bindFunction, createFunction, unbindFunction } from '../lib/functions/functions';
import { rotateSigningSecret } from '../lib/functions/signing-secrets';
import { parseFlags, UsageError } from './commands';
import { resolveKeyring } from './secrets-keys';

type Flags = Record<string, string | boolean | undefined>;
type Command = (db: Database, flags: Flags) => Promise<Record<string, unknown>>;

const uuid = z.string().uuid();
const binding = { workspace: uuid, function: uuid, agent: uuid };

/** A function's definition from its JSON file (docs/features/functions.md#making-and-binding-a-function). */
function readFunctionFile(file: string) {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--file: ${(error as Error).message}`);
  }
  const parsed = functionDefinitionSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`--file: ${issue.path.join('.') || 'definition'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Custom functions: made, bound and unbound here only (functions.edit is a scope no key holds). */
export const functionsCommands: Record<string, Command> = {
  'function create': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid, file: z.string().min(1) }, raw);
    return createFunction(db, resolveKeyring(), flags.workspace, readFunctionFile(flags.file));
  },
  'function bind': async (db, raw) => {
    const flags = parseFlags({ ...binding, 'after-question': z.coerce.number().int().min(1).max(50).optional() }, raw);
    return bindFunction(db, flags.workspace, flags.function, flags.agent, flags['after-question'] ?? null);
  },
  'function unbind': async (db, raw) => {
    const flags = parseFlags(binding, raw);
    return unbindFunction(db, flags.workspace, flags.function, flags.agent);
  },
  'function secret rotate': async (db, raw) => {
    const flags = parseFlags({ workspace: uuid }, raw);
    return rotateSigningSecret(db, resolveKeyring(), flags.workspace);
  },
};
