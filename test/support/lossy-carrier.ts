import type { Database } from '../../lib/database';
import { isTerminalCallState } from '../../lib/calls/call-states';
import { startTestApi } from './api';
import { carrierDependencies, startTestCarrier } from './carrier';
import { startTestWorker, uniqueTaskQueue, type TestTemporal } from './temporal';

/**
 * A carrier that loses every terminal event (it sends the others), with an API and a worker of their own
 * on a task queue of their own, whose calls wait callEndDeadlineMs (default 300 ms) for their end before
 * reconciling by lookup. Start work through the returned api and temporal to take this path.
 */
export async function startLossyCarrierPath(
  { db, url, temporal }: { db: Database; url: string; temporal: TestTemporal },
  options: { timeScale?: number; callEndDeadlineMs?: number } = {},
) {
  const lossyTemporal = { ...temporal, taskQueue: uniqueTaskQueue('lossy') };
  const api = await startTestApi({ db, url, temporal: lossyTemporal });
  const carrier = await startTestCarrier(db, {
    timeScale: options.timeScale,
    sendsEvent: (event) => !isTerminalCallState(event.status),
  });
  await startTestWorker(lossyTemporal.taskQueue, {
    db,
    ...carrierDependencies(carrier, api),
    callEndDeadlineMs: options.callEndDeadlineMs ?? 300,
  });
  return { temporal: lossyTemporal, api, carrier };
}
