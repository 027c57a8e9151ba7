import { log } from '../lib/log';

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
      if (done) log.info({ sweep: name }, done);
    } catch (error) {
      log.error({ err: error, sweep: name, retryInSeconds: everyMs / 1000 }, 'sweep failed');
    } finally {
      running = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
