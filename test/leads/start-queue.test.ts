import { describe, expect, it } from 'vitest';
import { createStartQueue } from '../../lib/temporal/start-queue';

/** A start that finishes when the test says so. */
function gate() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { done, open, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the queue of starts sent after the answer', () => {
  it('sends at most `concurrency` starts at once, the next as one finishes, in order', async () => {
    const queue = createStartQueue({ concurrency: 2 });
    const gates = [gate(), gate(), gate()];
    const begun: number[] = [];
    gates.forEach((g, index) =>
      queue.offer(`k${index}`, () => {
        begun.push(index);
        return g.done;
      }),
    );
    await settle();
    expect(begun).toEqual([0, 1]);
    gates[1]!.open();
    await settle();
    expect(begun).toEqual([0, 1, 2]);
    gates[0]!.open();
    gates[2]!.open();
    await queue.stop();
  });

  it('takes a key once while it waits or is being started, and again once it is done', async () => {
    const queue = createStartQueue({ concurrency: 1 });
    const first = gate();
    let starts = 0;
    const start = () => {
      starts++;
      return first.done;
    };
    expect(queue.offer('same', start)).toBe(true);
    expect(queue.offer('same', start)).toBe(false);
    expect(queue.isWaiting('same')).toBe(true);
    first.open();
    await settle();
    expect(queue.isWaiting('same')).toBe(false);
    expect(queue.offer('same', async () => void starts++)).toBe(true);
    await queue.stop();
    expect(starts).toBe(2);
  });

  it('refuses beyond maxQueued, leaving the rest to the sweep', async () => {
    const queue = createStartQueue({ concurrency: 1, maxQueued: 2 });
    const blocked = gate();
    expect(queue.offer('a', () => blocked.done)).toBe(true);
    expect(queue.offer('b', () => blocked.done)).toBe(true);
    expect(queue.offer('c', () => blocked.done)).toBe(false);
    expect(queue.isWaiting('c')).toBe(false);
    blocked.open();
    await queue.stop();
  });

  it('tells onError of a start that failed, and goes on with the next', async () => {
    const failures: string[] = [];
    const queue = createStartQueue({
      concurrency: 1,
      onError: (key, error) => failures.push(`${key}: ${(error as Error).message}`),
    });
    let nextRan = false;
    queue.offer('bad', async () => {
      throw new Error('temporal unreachable');
    });
    const next = gate();
    queue.offer('good', async () => {
      nextRan = true;
      next.open();
    });
    await next.done;
    await queue.stop();
    expect(failures).toEqual(['bad: temporal unreachable']);
    expect(nextRan).toBe(true);
  });

  it('on stop, drops what was not sent, waits for the starts in flight and takes nothing more', async () => {
    const queue = createStartQueue({ concurrency: 1 });
    const inFlight = gate();
    let finished = false;
    let dropped = false;
    queue.offer('sent', async () => {
      await inFlight.done;
      finished = true;
    });
    queue.offer('unsent', async () => {
      dropped = true;
    });
    const stopping = queue.stop();
    inFlight.open();
    await stopping;
    expect(finished).toBe(true);
    expect(dropped).toBe(false);
    expect(queue.isWaiting('unsent')).toBe(false);
    expect(queue.offer('late', async () => undefined)).toBe(false);
  });
});
