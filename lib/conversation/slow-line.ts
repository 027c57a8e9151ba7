/**
 * A custom function still running after this long has its slow line said (docs/features/functions.md#what-the-person-hears):
 * past the pause a person takes for thinking, well before the default timeout of 20 s. Both engines wait this long.
 */
export const SLOW_LINE_AFTER_MS = 4_000;

/** Whether `running` has not settled after `afterMs` (its timer cleared either way). */
export async function stillRunningAfter(running: Promise<unknown>, afterMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const slow = await Promise.race([
    running.then(
      () => false,
      () => false,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), afterMs))),
  ]);
  clearTimeout(timer);
  return slow;
}
