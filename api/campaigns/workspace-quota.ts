import type { Prisma } from '../../generated/prisma/client';
import type { ErrorCode } from '../../lib/error-codes';
import type { Database } from '../../lib/database';
import { Refusal } from '../../lib/refusal';
import { lockQuota } from './campaign-store';

export interface WorkspaceQuota {
  workspaceId: string;
  /** What holds the things counted when it is not the workspace (a call holds its issues): its id, named in the lock. */
  holderId?: string;
  /** What is counted, named in the lock and in the refusal: "dictionaries", "uploads". */
  noun: string;
  limit: number;
  /** 409 code of a refusal. */
  code: ErrorCode;
  count: (tx: Prisma.TransactionClient) => Promise<number>;
  /** The refusal's `detail` when "a workspace holds at most ..." is not what happened. */
  detail?: string;
}

/**
 * Creates one more of something a workspace may hold at most `limit` of, in one transaction: creations
 * of one kind in one workspace take turns on an advisory lock, so two at once cannot both pass the count.
 * Over the limit: 409 with the quota in `detail`, nothing created.
 */
export async function createWithinQuota<Row>(
  db: Database,
  quota: WorkspaceQuota,
  create: (tx: Prisma.TransactionClient) => Promise<Row>,
): Promise<Row> {
  return db.$transaction(async (tx) => {
    await lockQuota(tx, `${quota.noun}:${quota.holderId ?? quota.workspaceId}`);
    if ((await quota.count(tx)) >= quota.limit)
      throw new Refusal(quota.code, {
        detail: quota.detail ?? `a workspace holds at most ${quota.limit} ${quota.noun}; delete one first`,
      });
    return create(tx);
  });
}
