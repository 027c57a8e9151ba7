import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, onTestFinished, TestRunner } from 'vitest';

/*
 * Every process a test starts goes through here (docs/operations-stopping.md, "Tests"), so that the test that
 * started it stops it whatever its outcome:
 *  - started inside a test, it is killed when that test finishes (onTestFinished), unless started through
 *    forTheFile (a shared stack's process started again by a test): then as below;
 *  - started while the file is collected or in a hook, when the file (or describe block) is done. vitest
 *    silently drops an afterAll registered once the file has been collected (inside a test or a hook), so
 *    the afterAll of test/setup/processes.ts, which every file has, runs whichever of those is left.
 * Each runs in a process group of its own (the whole group is killed), with a parent-death signal: should
 * the test process itself die, the kernel kills it. And it carries the run's marker (WORKSPACE_TEST_RUN,
 * set by scripts/test.sh), by which scripts/leftover-processes.ts finds whatever is still alive at the end.
 */

const projectRoot = path.resolve(import.meta.dirname, '../..');

/** The variable that marks every process of a test run (scripts/leftover-processes.ts). */
export const TEST_RUN_MARKER = 'WORKSPACE_TEST_RUN';

export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface TestProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once the process has exited and its output is all read (or it could not be started: code null). */
  readonly exited: Promise<ProcessEnd>;
  /** When it exited (Date.now()), once it has. */
  readonly exitedAt: number | undefined;
  /** stdout and stderr so far, interleaved (output: 'collect'). */
  output(): string;
  /** Whether it has exited. */
  readonly running: boolean;
  /** Sends a signal to the process alone (not its group): what a platform's stop sends. */
  send(signal: NodeJS.Signals): void;
  /** Kills its whole process group with SIGKILL and waits until it has exited. */
  kill(): Promise<ProcessEnd>;
}

export interface TestProcessOptions {
  cwd?: string;
  /** The whole environment (default: this process's). The run's marker is added to it. */
  env?: NodeJS.ProcessEnv;
  /** 'collect' (default) keeps stdout and stderr for output(); 'ignore' drops them. */
  output?: 'collect' | 'ignore';
  /** Written to the process's standard input, then closed (default: no standard input). */
  input?: string;
}

/** Processes started and not yet exited, in this test file. */
const live = new Set<TestProcess>();
/** Cleanups of what was started outside any test, run by test/setup/processes.ts at the end of the file. */
const atFileEnd: Array<() => unknown> = [];

const untilFileEnd = new AsyncLocalStorage<true>();

/**
 * Runs `start` with what it starts (processes, cleanups) kept until the end of the file, even inside a test: a process
 * started again in a test (a crash's restart) for a stack the file's tests share.
 */
export function forTheFile<T>(start: () => T): T {
  return untilFileEnd.run(true, start);
}

/**
 * Runs `cleanup` when the current test finishes, or, outside a test, when the file is done (also when this is
 * called from a hook, where vitest's own afterAll would be dropped).
 */
export function atTestEnd(cleanup: () => unknown): void {
  let done: Promise<unknown> | undefined;
  const once = () => (done ??= Promise.resolve().then(cleanup));
  if (TestRunner.getCurrentTest() && !untilFileEnd.getStore()) {
    onTestFinished(async () => void (await once()));
    return;
  }
  // Among the file's other afterAll hooks while it is collected (a database is dropped after its users stop).
  afterAll(async () => void (await once()));
  atFileEnd.push(once);
}

/** test/setup/processes.ts: the file is done. */
export async function runFileEndCleanups(): Promise<void> {
  const cleanups = atFileEnd.splice(0).reverse();
  await Promise.allSettled(cleanups.map(async (cleanup) => cleanup()));
  await Promise.allSettled([...live].map((process) => process.kill()));
}

/** The test process is exiting: nothing it started may stay (also when a file is torn down abruptly). */
process.once('exit', () => {
  for (const each of live) killGroup(each.pid, 'SIGKILL');
});

function killGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Starts `command` as a process of the current test (or, outside a test, of the file): see above. Through
 * setpriv, the process itself is `command` (same pid), with SIGKILL as its parent-death signal.
 */
export function startTestProcess(
  name: string,
  command: string,
  args: string[],
  options: TestProcessOptions = {},
): TestProcess {
  const env = { ...(options.env ?? process.env) };
  if (process.env[TEST_RUN_MARKER] && env[TEST_RUN_MARKER] === undefined)
    env[TEST_RUN_MARKER] = process.env[TEST_RUN_MARKER];
  const collect = (options.output ?? 'collect') === 'collect';
  const child = spawn('setpriv', ['--pdeathsig=SIGKILL', '--', command, ...args], {
    cwd: options.cwd ?? projectRoot,
    env,
    detached: true,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', collect ? 'pipe' : 'ignore', collect ? 'pipe' : 'ignore'],
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let ended: ProcessEnd | undefined;
  let exitedAt: number | undefined;
  child.once('exit', () => (exitedAt = Date.now()));
  // 'close': exited, and its stdout and stderr read to their end.
  const exited = new Promise<ProcessEnd>((resolve) => {
    const end = (code: number | null, signal: NodeJS.Signals | null) => resolve((ended = { code, signal }));
    child.once('close', end);
    child.once('error', () => end(null, null));
  });
  const started: TestProcess = {
    name,
    child,
    pid: child.pid ?? -1,
    exited,
    output: () => output,
    get exitedAt() {
      return exitedAt;
    },
    get running() {
      return ended === undefined;
    },
    send(signal) {
      if (ended === undefined) child.kill(signal);
    },
    async kill() {
      // The group too: what the process started dies with it, even after the process itself has exited.
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      return exited;
    },
  };
  if (child.pid !== undefined) {
    live.add(started);
    void exited.then(() => live.delete(started));
  }
  atTestEnd(() => started.kill());
  return started;
}

/** A project entry point (`node --import tsx <entry> [args]`) with `env` over this process's environment. */
export function startEntryPoint(
  entry: string,
  env: Record<string, string | undefined>,
  { args = [], ...options }: Omit<TestProcessOptions, 'env'> & { args?: string[] } = {},
): TestProcess {
  return startTestProcess(entry, process.execPath, ['--import', 'tsx', entry, ...args], {
    ...options,
    env: { ...process.env, ...env },
  });
}

/**
 * execFile for tests: runs a process of the test to its end and answers its exit code and output; killed
 * when the test finishes, or after timeoutMs (default 60 s), whichever comes first.
 */
export async function runTestProcess(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const started = startTestProcess(path.basename(command), command, args, {
    cwd: options.cwd,
    env: options.env,
    input: options.input,
  });
  let stdout = '';
  let stderr = '';
  started.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  started.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => void started.kill(), options.timeoutMs ?? 60_000);
  const { code, signal } = await started.exited;
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

/** promisify(execFile) for tests: runTestProcess, rejecting (with code, signal, stdout, stderr) unless it exits 0. */
export async function execTestProcess(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  const result = await runTestProcess(command, args, options);
  if (result.code === 0) return { stdout: result.stdout, stderr: result.stderr };
  throw Object.assign(
    new Error(`${command} ${args.join(' ')} exited ${result.code ?? result.signal}: ${result.stderr.slice(-2000)}`),
    result,
  );
}
