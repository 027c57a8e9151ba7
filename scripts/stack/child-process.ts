import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/**
 * Spawns a long-running process whose output is prefixed with its name. Through setpriv's parent-death
 * signal it is stopped even when the process that started it is killed outright: nothing is left behind.
 */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions & { quiet?: boolean; parentDeathSignal?: NodeJS.Signals; setpriv?: string[] } = {},
): ManagedProcess {
  // One setpriv for both: a later change of user would clear the parent-death signal.
  const { quiet, parentDeathSignal = 'SIGTERM', setpriv = [], ...spawnOptions } = options;
  const child = spawn('setpriv', [...setpriv, `--pdeathsig=${parentDeathSignal}`, '--', command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...spawnOptions,
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  if (!quiet) {
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n')) if (line.trim()) process.stderr.write(`[${name}] ${line}\n`);
      });
    }
  } else {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  let stopping: Promise<void> | undefined;
  return {
    name,
    child,
    exited,
    stop(signal = 'SIGTERM', graceMs = 10_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

export async function isPortFree(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  timeoutMs: number,
  exited?: Promise<unknown>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let processGone = false;
  void exited?.then(() => (processGone = true));
  let lastError: unknown;
  while (Date.now() < deadline && !processGone) {
    try {
      return await probe();
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const reason = processGone ? 'its process exited' : `no answer in ${timeoutMs} ms`;
  throw new Error(
    `${what} did not start: ${reason} (${lastError instanceof Error ? lastError.message : String(lastError)})`,
  );
}
