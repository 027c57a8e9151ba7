import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { projectRoot } from '../scripts/stack/paths';

/**
 * Runs a load generator (bench/load-*.ts) in its own process, so that it does not share the event loop of
 * the server it measures, and answers the one JSON object it prints.
 */
export async function runLoadProcess<R>(script: string, args: readonly string[], env: Record<string, string> = {}) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(stdout) as R;
}
