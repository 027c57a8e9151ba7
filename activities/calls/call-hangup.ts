import type { Database } from '../../lib/database';
import type { Carrier } from '../../lib/calls/carrier';

/** Asks the carrier to hang these calls up (marked hangupRequestedAt first); each one's canceled event ends it. */
export async function hangUpCalls(
  db: Database,
  carrier: Carrier,
  inProgress: ReadonlyArray<{ attemptId: string; providerCallId: string }>,
): Promise<void> {
  if (inProgress.length === 0) return;
  await db.call.updateMany({
    where: { attemptId: { in: inProgress.map((call) => call.attemptId) }, hangupRequestedAt: null },
    data: { hangupRequestedAt: new Date() },
  });
  for (let start = 0; start < inProgress.length; start += 20)
    await Promise.all(inProgress.slice(start, start + 20).map((call) => carrier.hangup(call.providerCallId)));
}

/** A stopped campaign's calls in progress (ringing or talking), hung up; how many. */
export async function hangUpCampaignCalls(db: Database, carrier: Carrier, campaignId: string): Promise<number> {
  const inProgress = await db.call.findMany({
    where: { campaignId, status: 'dialing', providerCallId: { not: null } },
    select: { attemptId: true, providerCallId: true },
  });
  await hangUpCalls(db, carrier, inProgress as Array<{ attemptId: string; providerCallId: string }>);
  return inProgress.length;
}
