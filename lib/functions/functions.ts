import type { Database } from '../database';
import { ConflictError, NotFoundError } from '../operator-refusals';
import type { Keyring } from '../secrets/keyring';
import type { FunctionDefinition } from './function-definition';
import {
  deleteBinding,
  upsertBinding,
  insertFunction,
  liveAgentOf,
  liveFunctionNamed,
  liveFunctionOf,
} from './function-store';
import { ensureSigningSecret } from './signing-secrets';

/*
 * The operator's custom function commands (docs/features/functions.md#making-and-binding-a-function): functions.edit is
 * a scope no key holds, so making and binding a function is the operator CLI's (cli/functions-commands.ts).
 */

/**
 * A new function of the workspace. Its first function also makes the workspace's signing secret, answered this once
 * (`signingSecret`); later ones answer none (`function secret rotate` makes a new one).
 */
export async function createFunction(
  db: Database,
  keyring: Keyring,
  workspaceId: string,
  definition: FunctionDefinition,
): Promise<{ id: string; name: string; signingSecret?: string }> {
  const workspace = await db.workspace.findFirst({ where: { id: workspaceId, deletedAt: null }, select: { id: true } });
  if (!workspace) throw new NotFoundError(`workspace ${workspaceId} not found`);
  return db.$transaction(async (tx) => {
    // Names are unique among live functions: the model tells them apart by name. Taken in turns per workspace.
    const signingSecret = await ensureSigningSecret(tx, keyring, workspaceId);
    if (await liveFunctionNamed(tx, workspaceId, definition.name))
      throw new ConflictError(`the workspace has a function named ${definition.name} already`);
    const created = await insertFunction(tx, workspaceId, definition);
    return { ...created, ...(signingSecret && { signingSecret }) };
  });
}

async function functionAndAgent(db: Database, workspaceId: string, functionId: string, agentId: string) {
  const [fn, agent] = await Promise.all([
    liveFunctionOf(db, workspaceId, functionId),
    liveAgentOf(db, workspaceId, agentId),
  ]);
  if (!fn) throw new NotFoundError(`no live function of workspace ${workspaceId} has id ${functionId}`);
  if (!agent) throw new NotFoundError(`no live agent of workspace ${workspaceId} has id ${agentId}`);
  return agent;
}

/**
 * The agent's conversations are offered the function from their next call; with `afterQuestion`, the script engine
 * also calls it once the lead has answered that question of the agent's script (which must have it).
 */
export async function bindFunction(
  db: Database,
  workspaceId: string,
  functionId: string,
  agentId: string,
  afterQuestion: number | null = null,
) {
  const agent = await functionAndAgent(db, workspaceId, functionId, agentId);
  const questions = (agent.script as { questions?: unknown[] } | null)?.questions?.length ?? 0;
  if (afterQuestion !== null && afterQuestion > questions)
    throw new ConflictError(
      `agent ${agentId}'s script has ${questions} question(s): there is no question ${afterQuestion}`,
    );
  await upsertBinding(db, agentId, functionId, afterQuestion);
  return { functionId, agentId, bound: true, afterQuestion };
}

export async function unbindFunction(db: Database, workspaceId: string, functionId: string, agentId: string) {
  await functionAndAgent(db, workspaceId, functionId, agentId);
  if (!(await deleteBinding(db, agentId, functionId)))
    throw new NotFoundError(`function ${functionId} is not bound to agent ${agentId}`);
  return { functionId, agentId, bound: false };
}
