import type { PhoneNumber } from '../../generated/prisma/client';
import { lockLiveAgent } from '../../lib/agents/agent-lock';
import type { AppServices } from '../app-services';

/** The phone numbers API's SQL (docs/features/phone-numbers.md). */

type Db = AppServices['db'];

/** These agents of the workspace (deleted ones too), with what tells whether a number routed to one takes calls. */
export async function agentsOfWorkspace(db: Db, workspaceId: string, ids: readonly string[]) {
  return db.agent.findMany({
    where: { id: { in: [...ids] }, workspaceId },
    select: { id: true, name: true, voiceId: true, script: true, deletedAt: true },
  });
}

export async function phoneNumbersOfWorkspace(db: Db, workspaceId: string): Promise<PhoneNumber[]> {
  return db.phoneNumber.findMany({
    where: { workspaceId },
    orderBy: { e164: 'asc' },
  });
}

export async function phoneNumberWhere(db: Db, where: { id: string; workspaceId: string }) {
  return db.phoneNumber.findFirst({ where });
}

/**
 * The number's inbound calls go to the agent (null: to none), the agent held against its deletion until the routing
 * is written (lib/agents/agent-lock.ts). null when the agent is not a live agent of the workspace: nothing written.
 */
export async function routeNumberToAgent(
  db: Db,
  workspaceId: string,
  numberId: string,
  inboundAgentId: string | null,
): Promise<PhoneNumber | null> {
  return db.$transaction(async (tx) => {
    if (inboundAgentId !== null && !(await lockLiveAgent(tx, workspaceId, inboundAgentId))) return null;
    return tx.phoneNumber.update({ where: { id: numberId }, data: { inboundAgentId } });
  });
}
