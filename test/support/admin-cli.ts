import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { runTestProcess } from './processes';

const projectRoot = path.resolve(import.meta.dirname, '../..');

/** Runs the operator CLI as a process of its own against the given database. */
export function runAdminCli(
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runAdminCliWith({}, databaseUrl, ...args);
}

/** runAdminCli with variables added to its environment (undefined: removed) and text on its standard input. */
export async function runAdminCliWith(
  options: { env?: Record<string, string | undefined>; input?: string },
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
  for (const [name, value] of Object.entries(options.env ?? {}))
    if (value === undefined) delete env[name];
    else env[name] = value;
  // A process of the test: killed when it finishes (test/support/processes.ts).
  const { code, stdout, stderr } = await runTestProcess(
    process.execPath,
    ['--import', 'tsx', 'cli/admin.ts', ...args],
    {
      cwd: projectRoot,
      env,
      input: options.input,
    },
  );
  return { code: code ?? -1, stdout, stderr };
}

/**
 * The operator CLI as a file that seals secrets runs it: SECRETS_KEYS given per call (`keys`, `defaultKeys` unless
 * told; null: unset), and no development stack's key ring to fall back on (a folder of the file's own). `adminJson`
 * expects success, nothing on standard error, and answers the parsed output.
 */
export function sealingAdminCli(databaseUrl: string, defaultKeys: string) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'admin-cli-'));
  const admin = (
    args: string[],
    options: { keys?: string | null; env?: Record<string, string>; input?: string } = {},
  ) =>
    runAdminCliWith(
      {
        env: {
          WORKSPACE_DATA_DIR: dataDir,
          SECRETS_KEYS: options.keys === null ? undefined : (options.keys ?? defaultKeys),
          ...options.env,
        },
        input: options.input,
      },
      databaseUrl,
      ...args,
    );
  async function adminJson(args: string[], options?: Parameters<typeof admin>[1]) {
    const result = await admin(args, options);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as Record<string, any>;
  }
  return { admin, adminJson, dataDir };
}
