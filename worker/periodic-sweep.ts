/**
 * Runs a worker's sweep at start and every `everyMs`, one pass at a time: what a pass answers (a line
 * saying what it did, or null when nothing) is logged under the sweep's name; a failed pass is logged
 * and tried again at the next tick. Answers its stop.
 */
export function startPeriodicSweep(name: string, everyMs: number, pass: () => Promise<string | null>): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const done = await pass();
      if (done) console.log(`[${name}] ${done}`);
    } catch (error) {
      console.error(`[${name}] failed, tried again in ${everyMs / 1000} s: ${(error as Error).message}`);
    } finally {
      running = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
