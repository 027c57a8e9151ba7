import { sleep, type RetryBackoff } from '../../lib/http/post-until-answered';

/**
 * What the carrier twins (simulators/twilio-twin/, simulators/telnyx-twin/) share to run their calls durably: one loop
 * per live call, woken when the REST API changes the call's row, started again after a failure; and each call's
 * webhooks delivered in order, at least once (or once), from the rows that owe them. The protocol (what a step does,
 * how a webhook is signed and sent) is each twin's own.
 */
export interface TwinRuntimeOptions {
  /** The twin's name in its log lines. */
  name: string;
  retry: RetryBackoff;
  /** 'until-answered': each webhook retried with backoff until answered 2xx; 'once': one attempt each. */
  delivery: 'until-answered' | 'once';
}

export interface CallLoopControl {
  /** Set when the REST API changed the row: the loop reads it again before its next step. */
  woken: boolean;
  /** Aborts when the loop is woken: a wait for the next step ends at once. */
  signal: () => AbortSignal;
}

export interface OwedWebhook {
  seq: number;
}

export function createTwinRuntime(options: TwinRuntimeOptions) {
  const { retry } = options;
  const stopping = new AbortController();
  const loops = new Map<string, { wake: () => void; done: Promise<void> }>();
  const deliveries = new Map<string, { kick: () => void; done: Promise<void> }>();

  /** Starts the call's loop unless it runs: `run` takes the call's steps until it ends; a failure starts it again. */
  function start(id: string, run: (control: CallLoopControl) => Promise<void>) {
    if (loops.has(id) || stopping.signal.aborted) return;
    let wakeUp = new AbortController();
    const control: CallLoopControl = { woken: false, signal: () => wakeUp.signal };
    const loop = {
      wake: () => {
        control.woken = true;
        wakeUp.abort();
        wakeUp = new AbortController();
      },
      done: Promise.resolve(),
    };
    loop.done = (async () => {
      // A loop that fails (its database unreachable) starts again from the row after a pause.
      for (let delay = retry.firstMs; !stopping.signal.aborted; delay = Math.min(delay * 2, retry.maxMs)) {
        try {
          await run(control);
          return;
        } catch (error) {
          if (stopping.signal.aborted) return;
          console.error(`${options.name}: call ${id} stalled, trying again`, error);
          await sleep(delay, stopping.signal);
        }
      }
    })().finally(() => loops.delete(id));
    loops.set(id, loop);
  }

  /** The call's loop reads its row again now; false when no loop runs for it. */
  function wake(id: string): boolean {
    const loop = loops.get(id);
    loop?.wake();
    return loop !== undefined;
  }

  /**
   * Delivers the call's webhooks not yet delivered, in order: `owed` reads them (oldest first), `send` makes one
   * attempt (true: answered 2xx), `delivered` writes one down. Asked again while it runs, it looks again before it
   * stops. Its database unreachable, it pauses and tries again.
   */
  function deliver<T extends OwedWebhook>(
    id: string,
    store: {
      owed: () => Promise<T[]>;
      send: (webhook: T, attempt: number, signal: AbortSignal) => Promise<boolean>;
      delivered: (webhook: T) => Promise<unknown>;
    },
  ) {
    const existing = deliveries.get(id);
    if (existing) return existing.kick();
    const entry = {
      again: true,
      kick: () => {
        entry.again = true;
      },
      done: Promise.resolve(),
    };
    const deliverOne = async (webhook: T) => {
      for (
        let delay = retry.firstMs, attempt = 1;
        !stopping.signal.aborted;
        delay = Math.min(delay * 2, retry.maxMs), attempt += 1
      ) {
        try {
          if (await store.send(webhook, attempt, AbortSignal.any([stopping.signal, AbortSignal.timeout(10_000)])))
            return;
        } catch {
          // Unreachable or timed out: as any answer that is not 2xx.
        }
        if (options.delivery === 'once') return;
        await sleep(delay, stopping.signal);
      }
    };
    entry.done = (async () => {
      for (let delay = retry.firstMs; ;) {
        // Leaves the map in the same turn as it finds nothing more to do, so that no kick is lost.
        if (!entry.again || stopping.signal.aborted) {
          deliveries.delete(id);
          return;
        }
        entry.again = false;
        try {
          for (const webhook of await store.owed()) {
            await deliverOne(webhook);
            if (stopping.signal.aborted) break;
            await store.delivered(webhook);
          }
          delay = retry.firstMs;
        } catch (error) {
          console.error(`${options.name}: delivery for ${id} paused`, error);
          entry.again = true;
          await sleep(delay, stopping.signal);
          delay = Math.min(delay * 2, retry.maxMs);
        }
      }
    })();
    deliveries.set(id, entry);
  }

  return {
    /** Aborts when the twin stops. */
    signal: stopping.signal,
    start,
    wake,
    deliver,
    /** Stops every loop and delivery (the next start goes on with them from the rows). */
    async close() {
      stopping.abort();
      await Promise.all([...loops.values(), ...deliveries.values()].map((entry) => entry.done));
    },
  };
}

export type TwinRuntime = ReturnType<typeof createTwinRuntime>;
