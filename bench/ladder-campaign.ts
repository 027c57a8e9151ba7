import type { Database } from '../lib/database';

/** The benches' dial ladder: three rungs 1 s apart; every outcome but answered or invalid goes on. */
export const BENCH_LADDER = {
  rungs: [{ delaySeconds: 0 }, { delaySeconds: 1 }, { delaySeconds: 1 }],
  outcomes: {
    answered: 'end',
    busy: 'next',
    no_answer: 'next',
    voicemail: 'next',
    failed: 'next',
    invalid_number: 'end',
  },
};
export const ALWAYS_OPEN = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };
/** Ends in 5: busy on the simulated telephony, old and new, so every lead takes all three rungs. */
export const BUSY_PHONE = '+14155550125';

export const createLadderCampaign = (db: Database, workspaceId: string, status: 'DRAFT' | 'RUNNING') =>
  db.campaign.create({
    data: {
      workspaceId,
      name: 'Bench',
      acceptsLeadPush: true,
      status,
      dialLadder: BENCH_LADDER,
      callingWindow: ALWAYS_OPEN,
      maxConcurrentCalls: 1000,
    },
  });

type Post = (pathname: string, body: unknown, expected: number) => Promise<void>;

/** Pushes `count` busy leads into the campaign in batches of 100 (POST …/leads/batch). */
export const pushBusyLeads = (post: Post, campaignId: string, count: number, idempotencyKey: () => string) =>
  pushLeads(post, campaignId, count, () => ({ lead: { phone: BUSY_PHONE }, idempotencyKey: idempotencyKey() }));

/** Pushes `count` leads, the index-th as `lead(index)` gives it, into the campaign in batches of 100 (POST …/leads/batch). */
export async function pushLeads(
  post: Post,
  campaignId: string,
  count: number,
  lead: (index: number) => { lead: Record<string, unknown>; idempotencyKey: string },
): Promise<void> {
  for (let offset = 0; offset < count; offset += 100) {
    const size = Math.min(100, count - offset);
    await post(
      `/v1/campaigns/${campaignId}/leads/batch`,
      { leads: Array.from({ length: size }, (_, index) => lead(offset + index)) },
      200,
    );
  }
}
