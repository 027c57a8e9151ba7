import path from 'node:path';
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
