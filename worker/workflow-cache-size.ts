import { getHeapStatistics } from 'node:v8';

/** Heap kept for the bundle, the SDK and activations in progress: the SDK's own default sets aside the same. */
const BASE_HEAP_MB = 200;
/**
 * Heap one cached execution may take: journey runs, the heavier kind, grew the worker by about 0.5 MB
 * each in bench/journeys.ts (runs waiting on a timer) since the pure modules workflows import are shared
 * (worker/shared-workflow-modules.ts; 3.4 MB before); 1 MB leaves room for longer histories and variables.
 */
const HEAP_MB_PER_CACHED_WORKFLOW = 1;
const MIN_CACHED_WORKFLOWS = 10;

/**
 * The default of WORKER_MAX_CACHED_WORKFLOWS: as many executions as fit in the heap limit the process
 * runs with (`--max-old-space-size` applies to the workflow thread too), so a limit set to fit a
 * container cannot be overrun by the cache. 4 GB (Node's limit on a large host) gives 3944;
 * `--max-old-space-size=768` gives 568.
 */
export function cachedWorkflowsForHeap(heapLimitBytes: number): number {
  const heapMb = heapLimitBytes / 2 ** 20;
  return Math.max(MIN_CACHED_WORKFLOWS, Math.floor((heapMb - BASE_HEAP_MB) / HEAP_MB_PER_CACHED_WORKFLOW));
}

/**
 * The `--max-old-space-size` (MB) a process was started with, on its command line or in NODE_OPTIONS (the command
 * line wins, as in node), or undefined. V8's heap_size_limit is that plus the young generation, which cached
 * executions do not stay in and which V8 sizes per version: 48 MB more on Node 20, 192 MB more on Node 24
 * (`--max-old-space-size=768` gives 816 and 960 MB), so the limit set is read, not derived from the heap's.
 */
export function maxOldSpaceSizeMb(execArgv: readonly string[], nodeOptions = ''): number | undefined {
  let found: number | undefined;
  for (const flag of [...nodeOptions.split(/\s+/), ...execArgv]) {
    const match = /^--max[-_]old[-_]space[-_]size=(\d+)$/.exec(flag);
    if (match) found = Number(match[1]);
  }
  return found;
}

/** The default for this process: from its old-space limit when one was set, else from its heap limit. */
export function cachedWorkflowsForThisProcess(): number {
  const oldSpaceMb = maxOldSpaceSizeMb(process.execArgv, process.env.NODE_OPTIONS);
  return cachedWorkflowsForHeap(oldSpaceMb === undefined ? getHeapStatistics().heap_size_limit : oldSpaceMb * 2 ** 20);
}
