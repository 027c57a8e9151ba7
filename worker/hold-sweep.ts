import { ABANDONED_HOLD_AGE_MS, settleAbandonedHolds } from '../lib/credits/abandoned-holds';
import { prismaCreditStore } from '../lib/credits/ledger-store';
import type { Database } from '../lib/database';
import { startPeriodicSweep } from './periodic-sweep';

/** How often each worker sweeps abandoned credit holds. */
export const HOLD_SWEEP_EVERY_MS = 10 * 60_000;

/**
 * The periodic caller of settleAbandonedHolds (docs/features/credits.md, "The sweep"): at start and every
 * HOLD_SWEEP_EVERY_MS, each worker settles the holds still pending ABANDONED_HOLD_AGE_MS after they were
 * taken, whose operation died without settling them. Several workers sweeping at once is safe (settling
 * is idempotent). A failed sweep is logged and tried again at the next tick. Answers its stop.
 */
export function startHoldSweep(db: Database, options: { everyMs?: number; ageMs?: number } = {}): () => void {
  const { everyMs = HOLD_SWEEP_EVERY_MS, ageMs = ABANDONED_HOLD_AGE_MS } = options;
  const store = prismaCreditStore(db);
  return startPeriodicSweep('hold-sweep', everyMs, async () => {
    const settled = await settleAbandonedHolds(store, new Date(Date.now() - ageMs));
    return settled.posted + settled.voided > 0
      ? `abandoned credit holds settled: ${settled.posted} posted, ${settled.voided} voided`
      : null;
  });
}
