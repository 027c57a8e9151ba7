import type { TestProcess } from './processes';

/**
 * The slack the stop tests give a process beyond its grace period (docs/operations-stopping.md): generous, for
 * a loaded two-core machine, and still far below what a process that does not stop takes (forever).
 */
export const STOP_MARGIN_MS = 10_000;

/** The JSON lines a process has written (lib/log.ts); other lines are left out. */
export function logLines(process: TestProcess): Array<Record<string, unknown>> {
  return process
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

/** Waits until the process has written `text` (its output holds it), failing if it exits or takes timeoutMs. */
export async function waitForOutput(process: TestProcess, text: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!process.output().includes(text)) {
    if (!process.running) throw new Error(`${process.name} exited before writing "${text}":\n${process.output()}`);
    if (Date.now() > deadline) throw new Error(`${process.name} did not write "${text}" in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Sends `signal` and waits for the process to exit, at most withinMs: answers its exit code and how long after
 * the signal it exited, or throws (with its output) if it is still running then.
 */
export async function stopBySignal(
  process: TestProcess,
  signal: NodeJS.Signals,
  withinMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const sentAt = Date.now();
  process.send(signal);
  let timer: NodeJS.Timeout | undefined;
  const end = await Promise.race([
    process.exited,
    new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), withinMs))),
  ]);
  clearTimeout(timer);
  if (end === null)
    throw new Error(`${process.name} still running ${withinMs} ms after ${signal}; its output:\n${process.output()}`);
  return { ...end, ms: process.exitedAt! - sentAt };
}
