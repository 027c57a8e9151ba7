import path from 'node:path';
import { runTestProcess } from './processes';

const projectRoot = path.resolve(import.meta.dirname, '../..');

/** Runs the operator CLI as a process of its own against the given database. */
export async function runAdminCli(
  databaseUrl: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  // A process of the test: killed when it finishes (test/support/processes.ts).
  const { code, stdout, stderr } = await runTestProcess(
    process.execPath,
    ['--import', 'tsx', 'cli/admin.ts', ...args],
    {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    },
  );
  return { code: code ?? -1, stdout, stderr };
}
