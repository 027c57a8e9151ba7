// The hostile-input suite's timing (test/hostile/, docs/hostile-input.md): a function fed its worst case at its cap
// must finish within a stated budget. The best of three runs is taken, after one to warm the code up, so that a
// pause of a loaded machine (a collection, another process) does not fail a function that is fast.

/** The budget of one worst case in milliseconds: generous for a loaded 2-CPU machine; the old code took seconds. */
export const WORST_CASE_BUDGET_MS = 150;

/** 64 KiB: the size fed where no lower cap applies. */
export const UNCAPPED_CHARS = 64 * 1024;

/** The best of three timed runs of `run`, in milliseconds. */
export function bestTimeMs(run: () => unknown): number {
  run();
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** `unit` repeated to exactly `chars` characters. */
export const repeatedTo = (unit: string, chars: number) => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
