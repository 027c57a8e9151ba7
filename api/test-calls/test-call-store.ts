import type { Prisma } from '../../generated/prisma/client';
import type { AppServices } from '../app-services';

/** The test calls' SQL (docs/features/test-calls.md), run inside placeTestCall's transaction where it takes `tx`. */

type Tx = Prisma.TransactionClient;

/** The call recorded under this attempt id (a test call's Idempotency-Key), or null. */
export async function callOfAttempt(tx: Tx, attemptId: string) {
  return tx.call.findUnique({ where: { attemptId }, select: { id: true, workflowId: true } });
}

export async function recordedCallOfAttempt(tx: Tx, attemptId: string) {
  return tx.call.findUniqueOrThrow({ where: { attemptId }, select: { id: true, workflowId: true } });
}

/** The workspace's numbers (the one asked for, when given), oldest first, with their capabilities. */
export async function numbersOfWorkspace(tx: Tx, workspaceId: string, e164: string | undefined) {
  return tx.phoneNumber.findMany({
    where: { workspaceId, ...(e164 !== undefined && { e164 }) },
    orderBy: [{ assignedAt: 'asc' }, { id: 'asc' }],
    select: { e164: true, capabilities: true },
  });
}

export async function isOnDoNotCall(tx: Tx, workspaceId: string, phone: string): Promise<boolean> {
  const listed = await tx.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId, phone } } });
  return listed !== null;
}

/** The call, unless one holds its attempt id already; answers whether it was inserted. */
export async function insertCallOnce(tx: Tx, call: Prisma.CallCreateManyInput): Promise<boolean> {
  const rows = await tx.call.createMany({ data: [call], skipDuplicates: true });
  return rows.count === 1;
}

/** A call never dialed (no provider call, still dialing) is deleted. */
export async function deleteUndialedCall(db: AppServices['db'], id: string): Promise<void> {
  await db.call.deleteMany({ where: { id, status: 'dialing', providerCallId: null } });
}
