import { readFileSync } from 'node:fs';
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
  /**
   * How much CPU time one step may use in its thread (WORKER_CPU_BUDGET_MS), counted from when its thread takes it;
   * in wall time where the kernel does not tell a thread's CPU time (not Linux).
   */
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

/**
 * A step may wait for the CPU at most this many times its budget in wall time: its thread runs at the lowest priority
 * (lib/cpu-budget/serve.ts), and on a machine with no CPU to spare it could otherwise wait without end. An ordinary
 * call's steps use well under a millisecond of CPU, so they finish long before it; a tenant's runaway step is stopped
 * by whichever comes first.
 */
export const WALL_CEILING_FACTOR = 10;

/** How often the pool reads a running step's CPU time: a tenth of its budget, between 5 and 50 ms. */
const pollIntervalMs = (budgetMs: number) => Math.min(50, Math.max(5, Math.floor(budgetMs / 10)));

/** The CPU time (ns) thread `tid` of this process has run, from the scheduler's statistics; undefined if unreadable. */
function threadCpuNs(tid: number): number | undefined {
  try {
    const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
    return Number.isFinite(ns) ? ns : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `over` once the thread `tid` has used `budgetMs` of CPU time since now, or waited WALL_CEILING_FACTOR times
 * that; by the wall clock alone where its CPU time cannot be read. The timer to clear when the step ends first.
 */
function watchBudget(tid: number | undefined, budgetMs: number, over: () => void): NodeJS.Timeout {
  const startNs = tid === undefined ? undefined : threadCpuNs(tid);
  if (tid === undefined || startNs === undefined) return setTimeout(over, budgetMs);
  const startedAt = performance.now();
  const timer = setInterval(() => {
    const usedMs = ((threadCpuNs(tid) ?? startNs) - startNs) / 1e6;
    if (usedMs < budgetMs && performance.now() - startedAt < budgetMs * WALL_CEILING_FACTOR) return;
    clearInterval(timer);
    over();
  }, pollIntervalMs(budgetMs));
  return timer;
}

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
      clearInterval(timer);
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
      running -= 1;
      if (reuse && !closed) idle.push(thread);
      else void thread.terminate();
      pump();
    };
    const onMessage = (reply: Reply | { ready: true; tid?: number }) => {
      if ('ready' in reply) {
        // The budget counts from here: loading the thread's modules is not the tenant's step.
        timer = watchBudget(reply.tid, budgetMs, () => {
          settle(false);
          job.reject(new CpuBudgetExceeded(job.task, budgetMs));
        });
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
