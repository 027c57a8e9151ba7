// The SDK's per-promise stack capture in the workflow thread, and the switch that leaves it out
// (WORKFLOW_STACK_TRACES, docs/temporal-ui.md#the-stack-trace-tab).
//
// @temporalio/worker 1.24 installs a V8 promise hook in its workflow thread (@temporalio/worker/lib/workflow/vm-shared.js
// GlobalHandlers.setPromiseHook) that, for every promise a workflow creates, compiles two small functions in
// the workflow's context, builds an Error and formats its source-mapped stack, and keeps it for the
// `__stack_trace` and `__enhanced_stack_trace` queries (the Web UI's "Stack Trace" tab). It has no option to turn
// this off; it does turn it off by itself where `v8.promiseHooks.createHook` throws (a runtime without promise
// hooks), and then answers those queries "Workflow stack traces are not enabled on this worker".
// bench/stack-traces.ts measured the hook at about a third of the workflow thread's CPU per lead.
import workerThreads from 'node:worker_threads';

/** The SDK's workflow thread entry (threaded-vm.js starts `new Worker(require.resolve('./workflow-worker-thread'))`). */
const WORKFLOW_THREAD = /[\\/]@temporalio[\\/]worker[\\/]lib[\\/]workflow[\\/]workflow-worker-thread\.js$/;

/**
 * What the workflow thread runs first when stack traces are off: createHook throws, as on a runtime without
 * promise hooks, so the SDK installs none (and says so once on the thread's console); then the SDK's own entry.
 */
const withoutPromiseHooks = (entry: string) =>
  [
    "require('node:v8').promiseHooks.createHook = () => {",
    "  throw new Error('workflow stack traces are off (WORKFLOW_STACK_TRACES=off)');",
    '};',
    `require(${JSON.stringify(entry)});`,
  ].join('\n');

/** Worker.create calls under way that want no promise hooks: the workflow threads they start get none. */
let creationsWithoutHooks = 0;
let patched = false;

/**
 * Runs `create` (a Worker.create) so that the SDK workflow threads it starts install no promise hook when
 * `stackTraces` is false; other threads, and every thread started outside such a call, are left as they are.
 * Two creations under way at once, one with and one without, would both get none: the processes create their
 * workers one at a time.
 */
export async function withWorkflowStackTraces<T>(stackTraces: boolean, create: () => Promise<T>): Promise<T> {
  if (stackTraces) return create();
  installPatch();
  creationsWithoutHooks += 1;
  try {
    return await create();
  } finally {
    creationsWithoutHooks -= 1;
  }
}

function installPatch(): void {
  if (patched) return;
  patched = true;
  const Original = workerThreads.Worker;
  // The SDK looks Worker up on the module object when it starts its threads, so replacing it there reaches it.
  workerThreads.Worker = class extends Original {
    constructor(filename: string | URL, options?: workerThreads.WorkerOptions) {
      const entry = String(filename);
      if (creationsWithoutHooks > 0 && WORKFLOW_THREAD.test(entry) && !options?.eval)
        super(withoutPromiseHooks(entry), { ...options, eval: true });
      else super(filename, options);
    }
  };
}
