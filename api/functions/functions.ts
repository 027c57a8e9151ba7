import type { CustomFunction } from '../../generated/prisma/client';
import { liveFunctionsOfWorkspace, markFunctionDeleted } from '../../lib/functions/function-store';
import { forbidden } from '../../lib/refusal';
import { isUuid } from '../../lib/uuid';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';

/** The workspace's live functions, newest first, with the agents each is bound to. */
export async function listFunctions({ db }: AppServices, principal: Principal) {
  return (await liveFunctionsOfWorkspace(db, principal.workspaceId)).map(functionView);
}

export function functionView(
  fn: CustomFunction & { agents: Array<{ agentId: string; afterQuestion: number | null }> },
) {
  return {
    id: fn.id,
    name: fn.name,
    description: fn.description,
    parameters: fn.parameters as Record<string, unknown>,
    presets: fn.presets as Record<string, string>,
    url: fn.url,
    method: fn.method as 'POST' | 'PUT' | 'PATCH',
    timeoutMs: fn.timeoutMs,
    fillerLine: fn.fillerLine,
    slowLine: fn.slowLine,
    agents: fn.agents.map(({ agentId, afterQuestion }) => ({ id: agentId, afterQuestion })),
    createdAt: fn.createdAt.toISOString(),
  };
}

/**
 * Removes one of the workspace's functions: unbound from every agent, offered to no conversation from its next turn;
 * the calls it was called on keep their record of it. An unknown id, another workspace's function and one already
 * deleted get the same 403 forbidden.
 */
export async function deleteFunction({ db }: AppServices, principal: Principal, id: string): Promise<void> {
  const removed = isUuid(id) && (await markFunctionDeleted(db, principal.workspaceId, id));
  if (!removed) throw forbidden();
}
