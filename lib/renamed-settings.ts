import { z } from 'zod';
import { log } from './log';

/**
 * Settings renamed to say what they select (issue 41), each as { new name: old name }. For one deprecation period the
 * old name is still read when the new one is unset; either way a process that was given it warns once, naming the new
 * name. Shared infrastructure: the product's configuration (lib/config.ts) and the simulators' (simulators/\*\/config.ts)
 * both take it.
 */
export type SettingRenames = Readonly<Record<string, string>>;

/** Old names already warned of in this process: a configuration parsed again does not warn again. */
const warned = new Set<string>();

/** The environment with each renamed setting under its new name (the old name's value while the new one is unset). */
export function underNewNames(env: unknown, renames: SettingRenames): unknown {
  if (typeof env !== 'object' || env === null) return env;
  const given = env as Record<string, unknown>;
  let renamed: Record<string, unknown> | undefined;
  for (const [name, oldName] of Object.entries(renames)) {
    if (given[oldName] === undefined) continue;
    const newNameSet = given[name] !== undefined;
    if (!warned.has(oldName)) {
      warned.add(oldName);
      log.warn(
        { setting: oldName, replacement: name },
        newNameSet
          ? `config: ${oldName} is deprecated and ignored: ${name} is set`
          : `config: ${oldName} is deprecated: set ${name} instead (read while ${name} is unset, for one deprecation period)`,
      );
    }
    if (!newNameSet) (renamed ??= { ...given })[name] = given[oldName];
  }
  return renamed ?? env;
}

/** The schema reading each renamed setting under its old name too (underNewNames), in its one parse. */
export const withRenamedSettings = <Schema extends z.ZodType>(renames: SettingRenames, schema: Schema) =>
  z.preprocess((env) => underNewNames(env, renames), schema);
