import type { Client } from '@temporalio/client';
import { openLaddersOfNumbers } from '../leads/do-not-call';
import type { RunSql } from '../run-sql';
import { numberOptedOutSignal } from './messages';

/** Telling the ladders is bounded in time: a listing is never held up by an unreachable Temporal. */
const TELL_DEADLINE_MS = 5_000;
/** Signals in flight at once. */
const TELL_CONCURRENCY = 50;

/**
 * Tells the workspace's running dial ladders of these numbers that they were put on the Do-Not-Call list
 * (numberOptedOutSignal), so that a lead waiting for its next attempt ends opted out at once
 * (docs/features/dial-ladder.md#an-opt-out-ends-the-wait). Called by every path that lists a number, after the listing
 * is committed. At most OPTED_OUT_LADDERS_TOLD ladders per listing; nothing is thrown: a ladder not told (ended
 * meanwhile, past the cap, Temporal unreachable) still ends at its next attempt, which reads the list before it dials.
 * Answers how many were told.
 */
export async function tellLaddersOfOptOut(
  temporal: Client,
  sql: RunSql,
  listing: { workspaceId: string; phones: readonly string[] },
): Promise<number> {
  const workflowIds = await openLaddersOfNumbers(sql, listing.workspaceId, listing.phones);
  let told = 0;
  await temporal.connection
    .withDeadline(Date.now() + TELL_DEADLINE_MS, async () => {
      for (let start = 0; start < workflowIds.length; start += TELL_CONCURRENCY) {
        const signals = workflowIds.slice(start, start + TELL_CONCURRENCY).map((workflowId) =>
          temporal.workflow
            .getHandle(workflowId)
            .signal(numberOptedOutSignal)
            .then(() => told++)
            // Ended meanwhile (not found), or not reached: its next attempt reads the list.
            .catch(() => undefined),
        );
        await Promise.all(signals);
      }
    })
    .catch(() => undefined);
  return told;
}
