import { AsyncResource } from 'node:async_hooks';
/**
 * Durable work started after its request was answered: the request commits what it accepted (a lead, a
 * store's webhook) and answers; the Temporal start is queued here and sent a few at a time. Whatever is
 * lost here (a start that fails, a full queue, a process that dies) is left to a sweep that starts
 * whatever stored work still has no workflow, so this queue only makes the usual case fast.
 */
export interface StartQueue {
  /**
   * Queues `start` under `key` unless that key already waits, or the queue is full (false: the sweep
   * will start it). `start` must be idempotent (a workflow id of its own), and swallow nothing the sweep needs.
   */
  offer(key: string, start: () => Promise<unknown>): boolean;
  /** Whether `key` waits here or is being started: a sweep leaves it alone, not to send its start twice. */
  isWaiting(key: string): boolean;
  /** Drops what has not been sent and waits for the starts in flight. */
  stop(): Promise<void>;
}

export interface StartQueueOptions {
  /** Starts sent to Temporal at once; more only queue inside its server and client. */
  concurrency?: number;
  /** Starts waiting beyond this are left to the sweep, so that a burst cannot pile up in memory. */
  maxQueued?: number;
  /** Told of a start that failed (the sweep takes it over); never given the work's payload. */
  onError?: (key: string, error: unknown) => void;
}

export function createStartQueue(options: StartQueueOptions = {}): StartQueue {
  const concurrency = options.concurrency ?? 32;
  const maxQueued = options.maxQueued ?? 5_000;
  const queued: Array<{ key: string; start: () => Promise<unknown> }> = [];
  const waiting = new Set<string>();
  const inFlight = new Set<Promise<unknown>>();
  let stopped = false;

  const startNext = () => {
    while (!stopped && inFlight.size < concurrency && queued.length) {
      const { key, start } = queued.shift()!;
      const work = Promise.resolve()
        .then(start)
        .catch((error: unknown) => options.onError?.(key, error))
        .finally(() => {
          waiting.delete(key);
          inFlight.delete(work);
          startNext();
        });
      inFlight.add(work);
    }
  };

  return {
    offer(key, start) {
      if (stopped || waiting.has(key) || waiting.size >= maxQueued) return false;
      waiting.add(key);
      // The start runs in the context of the request that offered it (its trace span and log ids), not
      // in that of whichever start finished before it.
      queued.push({ key, start: AsyncResource.bind(start) });
      startNext();
      return true;
    },
    isWaiting: (key) => waiting.has(key),
    async stop() {
      stopped = true;
      for (const { key } of queued.splice(0)) waiting.delete(key);
      await Promise.allSettled([...inFlight]);
    },
  };
}
