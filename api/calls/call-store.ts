import type { Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The calls API's SQL (docs/features/calls.md): a call with its details, and the issues reported with it. */

type Db = AppServices['db'];
type OwnedWhere = { id: string; workspaceId: string };

/** Issues in the order they were reported (the id breaks ties of one instant). */
const oldestFirst = [{ createdAt: 'asc' }, { id: 'asc' }] as const;

/** The call with its lead's number, its translations and its issues. */
export async function callWithDetailsWhere(db: Db, where: OwnedWhere) {
  return db.call.findFirst({
    where,
    include: {
      lead: { select: { phone: true } },
      translations: { select: { language: true, provider: true, createdAt: true }, orderBy: { language: 'asc' } },
      issues: { orderBy: [...oldestFirst] },
      recording: { select: { status: true, durationSec: true, channels: true, deletedAt: true } },
    },
  });
}

export async function callIdWhere(db: Db, where: OwnedWhere) {
  return db.call.findFirst({ where, select: { id: true } });
}

export async function issuesOfCall(db: Db, callId: string) {
  return db.callIssue.findMany({ where: { callId }, orderBy: [...oldestFirst] });
}

export async function issueCountOfCall(tx: Prisma.TransactionClient, callId: string): Promise<number> {
  return tx.callIssue.count({ where: { callId } });
}

export async function insertCallIssue(tx: Prisma.TransactionClient, data: Prisma.CallIssueUncheckedCreateInput) {
  return tx.callIssue.create({ data });
}
