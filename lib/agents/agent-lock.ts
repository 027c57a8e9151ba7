import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client';

/**
 * Holds a live (not deleted) agent of the workspace against deletion until the transaction ends. DELETE
 * /agents/{id} locks the agent FOR UPDATE and only then reads what uses it; whatever comes to use an
 * agent (a campaign's agentId, a campaign starting, a number's inboundAgentId) takes this FOR SHARE lock
 * in the transaction of its write. Either the delete sees the use (409 agent_in_use), or the writer sees
 * the agent gone. Returns the agent's id as PostgreSQL prints it (lower case); null: no such live agent.
 */
export async function lockLiveAgent(
  tx: Prisma.TransactionClient,
  workspaceId: string,
  agentId: string,
): Promise<string | null> {
  // A uuid column: an id that is not a UUID names no agent (and must not reach the query).
  if (!z.guid().safeParse(agentId).success) return null;
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text AS id FROM "Agent"
     WHERE id = ${agentId}::uuid AND "workspaceId" = ${workspaceId}::uuid AND "deletedAt" IS NULL
       FOR SHARE`;
  return rows[0]?.id ?? null;
}
