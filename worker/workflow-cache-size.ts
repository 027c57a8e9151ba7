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
 * container cannot be overrun by the cache. 4 GB (Node's limit on a large host) gives 3944; 768 MB gives 616.
 */
export function cachedWorkflowsForHeap(heapLimitBytes: number): number {
  const heapMb = heapLimitBytes / 2 ** 20;
  return Math.max(MIN_CACHED_WORKFLOWS, Math.floor((heapMb - BASE_HEAP_MB) / HEAP_MB_PER_CACHED_WORKFLOW));
}

/** The default for this process, from the heap limit it was started with. */
export function cachedWorkflowsForThisProcess(): number {
  return cachedWorkflowsForHeap(getHeapStatistics().heap_size_limit);
}
