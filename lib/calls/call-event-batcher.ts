import type { RunSql } from '../run-sql';
import { applyCallEvents, type AppliedCallEvent, type ProviderCallEvent } from './call-end';

/**
 * Group commit for the carrier event endpoint (docs/features/calls.md#telephony-the-carrier-path): the events that
 * arrive while a batch is being written wait and go together in the next one, one statement and one commit for all
 * of them (applyCallEvents), instead of one each. A lone event goes at once, so an idle endpoint adds no wait. Each
 * caller is answered only once its own event is committed (accepted work is never lost), and with its own result.
 *
 * - Order: events are taken in arrival order, and a batch has each event the effect it would have had alone after
 *   the ones before it (events of one call, repeats of one event: applyCallEvents). An event that shares its call
 *   (attemptId or providerCallId) or its (provider, eventId) with one in a batch still in flight, or with one kept
 *   back, waits for a later batch, so that it comes after it.
 * - Isolation: a batch whose statement fails (a value PostgreSQL refuses, a deadlock with another writer) is
 *   applied again event by event, so a bad event fails its own request only.
 */
export interface CallEventBatcher {
  apply(event: ProviderCallEvent): Promise<AppliedCallEvent>;
}

export interface CallEventBatcherOptions {
  /** Events in one statement at most. */
  maxBatch?: number;
  /** Statements in flight at once (each on a connection of the pool). */
  maxInFlight?: number;
}

/** The defaults, as measured by bench/intake.ts (b) (docs/benchmarks/intake.md). */
export const CALL_EVENT_BATCH = { maxBatch: 50, maxInFlight: 1 } as const;

interface Waiting {
  event: ProviderCallEvent;
  keys: string[];
  resolve(result: AppliedCallEvent): void;
  reject(error: unknown): void;
}

/** What ties two events together: their call (by either id the carrier gives) and their own id. */
const keysOf = ({ provider, event }: ProviderCallEvent) => [
  `p:${provider}:${event.providerCallId}`,
  ...(event.attemptId === undefined ? [] : [`a:${provider}:${event.attemptId}`]),
  `e:${provider}:${event.eventId}`,
];

export function createCallEventBatcher(sql: RunSql, options: CallEventBatcherOptions = {}): CallEventBatcher {
  const maxBatch = options.maxBatch ?? CALL_EVENT_BATCH.maxBatch;
  const maxInFlight = options.maxInFlight ?? CALL_EVENT_BATCH.maxInFlight;
  let queue: Waiting[] = [];
  let inFlight = 0;
  /** Keys of the events in the batches in flight. */
  const busy = new Set<string>();

  function take(): Waiting[] {
    const batch: Waiting[] = [];
    const left: Waiting[] = [];
    /** Keys of the events kept back in this pass: a later event of theirs stays behind them. */
    const kept = new Set<string>();
    for (const waiting of queue) {
      if (batch.length < maxBatch && waiting.keys.every((key) => !busy.has(key) && !kept.has(key))) batch.push(waiting);
      else {
        left.push(waiting);
        for (const key of waiting.keys) kept.add(key);
      }
    }
    queue = left;
    return batch;
  }

  function pump(): void {
    while (inFlight < maxInFlight && queue.length) {
      const batch = take();
      if (!batch.length) return;
      inFlight++;
      for (const waiting of batch) for (const key of waiting.keys) busy.add(key);
      void run(batch).finally(() => {
        inFlight--;
        for (const waiting of batch) for (const key of waiting.keys) busy.delete(key);
        pump();
      });
    }
  }

  async function run(batch: Waiting[]): Promise<void> {
    let results: AppliedCallEvent[];
    try {
      results = await applyCallEvents(
        sql,
        batch.map((waiting) => waiting.event),
      );
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      // Nothing of the batch was committed: each event again on its own, in order (events of one call may be
      // among them), so that only a bad one fails.
      for (const waiting of batch) {
        try {
          const [result] = await applyCallEvents(sql, [waiting.event]);
          waiting.resolve(result!);
        } catch (own) {
          waiting.reject(own);
        }
      }
      return;
    }
    batch.forEach((waiting, index) => waiting.resolve(results[index]!));
  }

  return {
    apply(event) {
      return new Promise<AppliedCallEvent>((resolve, reject) => {
        queue.push({ event, keys: keysOf(event), resolve, reject });
        pump();
      });
    },
  };
}
