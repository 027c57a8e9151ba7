import { parentPort } from 'node:worker_threads';

interface TaskMessage {
  id: number;
  task: string;
  input: unknown;
}

/**
 * The thread's side of the CPU budget pool (lib/cpu-budget/cpu-budget.ts): answers the pool's `ping` with `ready`
 * (the step's clock starts then, not while the thread loads its modules), then runs each task asked for and answers
 * its result or its error's message. The pool terminates a thread past its budget, so a task never stops by itself.
 */
export function serveTasks(tasks: Readonly<Record<string, (input: never) => unknown>>): void {
  const port = parentPort;
  if (!port) throw new Error('a CPU budget thread runs only as a worker thread');
  port.on('message', (message: TaskMessage | { ping: true }) => {
    if ('ping' in message) return port.postMessage({ ready: true });
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
