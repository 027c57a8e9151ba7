import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';

interface TaskMessage {
  id: number;
  task: string;
  input: unknown;
}

/**
 * The thread's side of the CPU budget pool (lib/cpu-budget/cpu-budget.ts): answers the pool's `ping` with `ready`
 * (the step's clock starts then, not while the thread loads its modules) and the thread's kernel id, by which the pool
 * reads the CPU time the thread has used, then runs each task asked for and answers its result or its error's message.
 * The pool terminates a thread past its budget, so a task never stops by itself.
 */
export function serveTasks(tasks: Readonly<Record<string, (input: never) => unknown>>): void {
  const port = parentPort;
  if (!port) throw new Error('a CPU budget thread runs only as a worker thread');
  lowerThreadPriority();
  const tid = ownThreadId();
  port.on('message', (message: TaskMessage | { ping: true }) => {
    if ('ping' in message) return port.postMessage({ ready: true, tid });
    const { id, task, input } = message;
    try {
      const run = tasks[task] as ((input: unknown) => unknown) | undefined;
      if (!run) throw new Error(`no task ${task}`);
      port.postMessage({ id, ok: true, output: run(input) });
    } catch (error) {
      port.postMessage({ id, ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  });
}

/**
 * How nice a CPU budget thread is (0 to 19, 19 the lowest priority): a tenant's costly step then takes only the CPU
 * that the process's main threads (the API's requests, the worker's polls and heartbeats) and other processes leave,
 * so one workspace's flood of steps cannot slow another's requests on a machine with no CPU to spare. Its budget is
 * counted in the thread's own CPU time (lib/cpu-budget/cpu-budget.ts), so waiting for the CPU costs a step none of it.
 */
export const CPU_BUDGET_THREAD_NICE = 19;

/**
 * On Linux the nice value is a thread's own: setpriority for the calling task (pid 0) lowers this worker thread only,
 * never the process around it. Elsewhere (where it would be the whole process's) the thread keeps its priority.
 */
function lowerThreadPriority() {
  if (process.platform !== 'linux') return;
  try {
    setPriority(CPU_BUDGET_THREAD_NICE);
  } catch {
    // Lowering a priority is always allowed; a sandbox that forbids setpriority leaves the thread as it was.
  }
}

/** This thread's kernel id on Linux (/proc/thread-self is "<pid>/task/<tid>"); undefined elsewhere. */
function ownThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}
