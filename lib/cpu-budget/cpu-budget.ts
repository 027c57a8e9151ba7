import { Worker } from 'node:worker_threads';
import type { CpuTaskInput, CpuTaskName, CpuTaskOutput } from './tasks';

/**
 * CPU-heavy steps over tenant text run off the worker's main thread, each within a time budget
 * (docs/cpu-budget.md). The main thread heartbeats activities and polls Temporal; a step that ran there for
 * seconds (a regular expression cannot be interrupted) stalled every workflow of every workspace on the worker.
 * Here a step runs in one of a few worker threads; past its budget the thread is terminated (V8 stops even a
 * regular expression in the middle), the step fails with CpuBudgetExceeded, and a fresh thread takes the next.
 */

/** A step that did not finish within its budget: the tenant's data is too costly to process, and always will be. */
export class CpuBudgetExceeded extends Error {
  constructor(
    readonly task: CpuTaskName,
    readonly budgetMs: number,
  ) {
    super(`${task} did not finish within its budget of ${budgetMs} ms`);
    this.name = 'CpuBudgetExceeded';
  }
}

export interface CpuBudgetOptions {
  /** Worker threads at most (WORKER_CPU_THREADS). */
  threads: number;
  /** How long one step may run in its thread (WORKER_CPU_BUDGET_MS), counted from when its thread takes it. */
  budgetMs: number;
  /**
   * The thread's entry: default lib/cpu-budget/thread.ts (or its build). Tests give one serving the same names with
   * steps that never end (lib/cpu-budget/serve.ts).
   */
  threadFile?: URL;
}

export interface CpuBudget {
  readonly budgetMs: number;
  /** Runs `task` in a thread; rejects with CpuBudgetExceeded past the budget, with an Error if the thread died. */
  run<Name extends CpuTaskName>(task: Name, input: CpuTaskInput<Name>): Promise<CpuTaskOutput<Name>>;
  /** Stops every thread; steps under way or waiting reject. */
  close(): Promise<void>;
}

/** The defaults of WORKER_CPU_THREADS and WORKER_CPU_BUDGET_MS (lib/config.ts). */
export const CPU_BUDGET_DEFAULTS: CpuBudgetOptions = { threads: 1, budgetMs: 1000 };

// From the sources (tsx, vitest) the thread is a .ts file that Node loads through tsx; from the build (dist/) the
// compiled .js beside this one (tsconfig.build.json lists it: nothing imports it).
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const THREAD_FILE = new URL(FROM_SOURCES ? './thread.ts' : './thread.js', import.meta.url);

interface Job {
  task: CpuTaskName;
  input: unknown;
  resolve: (output: unknown) => void;
  reject: (error: Error) => void;
}

interface Reply {
  id: number;
  ok: boolean;
  output?: unknown;
  message?: string;
}

export function createCpuBudget({ threads, budgetMs, threadFile = THREAD_FILE }: CpuBudgetOptions): CpuBudget {
  const execArgv = threadFile.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const idle: Worker[] = [];
  const queue: Job[] = [];
  let running = 0;
  let nextId = 0;
  let closed = false;
  const all = new Set<Worker>();

  function startThread(): Worker {
    const thread = new Worker(threadFile, { execArgv });
    // An idle thread never keeps the process alive; the worker's own loop does while a step waits.
    thread.unref();
    all.add(thread);
    thread.once('exit', () => all.delete(thread));
    return thread;
  }

  function pump(): void {
    while (!closed && running < threads && queue.length > 0) {
      const job = queue.shift()!;
      running += 1;
      runOn(idle.pop() ?? startThread(), job);
    }
  }

  function runOn(thread: Worker, job: Job): void {
    const id = (nextId += 1);
    let timer: NodeJS.Timeout | undefined;
    const settle = (reuse: boolean) => {
      clearTimeout(timer);
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
      running -= 1;
      if (reuse && !closed) idle.push(thread);
      else void thread.terminate();
      pump();
    };
    const onMessage = (reply: Reply | { ready: true }) => {
      if ('ready' in reply) {
        // The budget counts from here: loading the thread's modules is not the tenant's step.
        timer = setTimeout(() => {
          settle(false);
          job.reject(new CpuBudgetExceeded(job.task, budgetMs));
        }, budgetMs);
        thread.postMessage({ id, task: job.task, input: job.input });
        return;
      }
      if (reply.id !== id) return;
      settle(true);
      if (reply.ok) job.resolve(reply.output);
      else job.reject(new Error(`${job.task} failed in its thread: ${reply.message}`));
    };
    const onError = (error: Error) => {
      settle(false);
      job.reject(error);
    };
    const onExit = (code: number) => {
      settle(false);
      job.reject(new Error(`${job.task}: its thread exited (code ${code})`));
    };
    thread.on('message', onMessage);
    thread.on('error', onError);
    thread.on('exit', onExit);
    // A ready thread answers at once; a new one answers when its modules are loaded (thread.ts).
    thread.postMessage({ ping: true });
  }

  return {
    budgetMs,
    run<Name extends CpuTaskName>(task: Name, input: CpuTaskInput<Name>) {
      if (closed) return Promise.reject(new Error('the CPU budget threads are closed'));
      return new Promise<CpuTaskOutput<Name>>((resolve, reject) => {
        queue.push({ task, input, resolve: resolve as (output: unknown) => void, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('the CPU budget threads are closed'));
      idle.length = 0;
      await Promise.all([...all].map((thread) => thread.terminate()));
    },
  };
}

let shared: CpuBudget | undefined;

/** The process's threads with the default settings, for activities built without their own (tests, tools). */
export function sharedCpuBudget(): CpuBudget {
  shared ??= createCpuBudget(CPU_BUDGET_DEFAULTS);
  return shared;
}
