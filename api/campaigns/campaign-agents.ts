import { ZodError } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import { lockLiveAgent } from '../../lib/agents/agent-lock';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';

/**
 * Writes a campaign in one transaction with a check that the agent it names (agentId, when given) is a
 * live agent of the caller's workspace: 400 invalid_body on agentId otherwise, and nothing is written.
 * The campaign's row is written (and so locked) first, then the agent is locked FOR SHARE: the same
 * order as a campaign starting (activities/campaigns/campaigns.ts), so the two never wait on each other in a
 * cycle, and DELETE /agents/{id} either sees the campaign use the agent or the write sees it gone.
 */
export async function writeNamingAgent<T>(
  db: AppServices['db'],
  principal: Principal,
  agentId: string | null | undefined,
  write: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  return db.$transaction(async (tx) => {
    const written = await write(tx);
    if (agentId && !(await lockLiveAgent(tx, principal.workspaceId, agentId)))
      throw new ZodError([
        { code: 'custom', path: ['agentId'], message: 'no agent of this workspace has this id', input: agentId },
      ]);
    return written;
  });
}
