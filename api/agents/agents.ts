import {
  AGENT_LIMITS,
  type AgentScript,
  type AgentUpdate,
  type ExtractionField,
  type NewAgent,
  type TransferMode,
  voiceLanguageMismatch,
} from '../../lib/agents/agent-definition';
import { ZodError } from 'zod';
import { backgroundAudioPlaybackOf } from '../../lib/background-audio/carrier-playback';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { checkAgentReferences } from './agent-references';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { createWithinQuota } from '../campaigns/workspace-quota';
import {
  insertAgent,
  liveAgentCount,
  liveAgentsOfWorkspace,
  liveAgentWhere,
  liveAgentWithLinksWhere,
  lockLiveAgentRow,
  markAgentDeleted,
  updateAgentRow,
  usersOfAgent,
  type AgentWithLinks,
} from './agent-store';
import type { Prisma } from '../../generated/prisma/client';

export function agentView(agent: AgentWithLinks) {
  return {
    id: agent.id,
    name: agent.name,
    language: agent.language,
    voiceId: agent.voiceId,
    script: agent.script as AgentScript,
    extractionFields: agent.extractionFields as ExtractionField[],
    dictionaryIds: agent.dictionaries.map((link) => link.dictionaryId),
    backgroundAudioId: agent.backgroundAudioId,
    backgroundAudioPlayback: backgroundAudioPlaybackOf(agent.backgroundAudioId),
    voicemailMessage: agent.voicemailMessage,
    instructions: agent.instructions,
    firstMessage: agent.firstMessage,
    transferNumber: agent.transferNumber,
    transferMode: agent.transferMode as TransferMode,
    conversationEngine: agent.conversationEngine,
    documentIds: agent.documents.map((link) => link.documentId),
    createdAt: agent.createdAt.toISOString(),
    updatedAt: agent.updatedAt.toISOString(),
  };
}

export async function listAgents({ db }: AppServices, principal: Principal) {
  const agents = await liveAgentsOfWorkspace(db, principal.workspaceId);
  return agents.map(agentView);
}

/** A live agent of the caller's workspace; unknown, deleted and another workspace's are the same 403. */
export async function findOwnedAgent({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => liveAgentWhere(db, where));
}

export async function getAgent({ db }: AppServices, principal: Principal, id: string) {
  return agentView(await findOwned(principal, id, (where) => liveAgentWithLinksWhere(db, where)));
}

/**
 * Locks a live agent of the caller's workspace FOR UPDATE until the transaction ends: edits, link
 * changes and the delete of one agent run one at a time, and a delete waits for every FOR SHARE holder
 * (lib/agents/agent-lock.ts) before it reads what uses the agent.
 */
export async function lockOwnedAgent(tx: Prisma.TransactionClient, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => lockLiveAgentRow(tx, where));
}

/** The agent's row and its dictionaries in one transaction, after checking and locking what it names. */
export async function createAgent({ db }: AppServices, principal: Principal, input: NewAgent) {
  const { dictionaryIds, ...settings } = input;
  const { workspaceId } = principal;
  const quota = {
    workspaceId,
    noun: 'agents',
    limit: AGENT_LIMITS.agentsPerWorkspace,
    code: ErrorCode.agent_limit_reached,
    count: (tx: Prisma.TransactionClient) => liveAgentCount(tx, workspaceId),
  };
  const agent = await createWithinQuota(db, quota, async (tx) => {
    await checkAgentReferences(tx, workspaceId, input);
    return insertAgent(tx, workspaceId, settings, dictionaryIds);
  });
  return agentView(agent);
}

/** Replaces each setting given (dictionaryIds as a whole list, in its new order); nothing changes on a refusal. */
export async function updateAgent({ db }: AppServices, principal: Principal, id: string, update: AgentUpdate) {
  const { dictionaryIds, ...settings } = update;
  const agent = await db.$transaction(async (tx) => {
    const locked = await lockOwnedAgent(tx, principal, id);
    // The language and the voice as they would be: a change of either must leave a voice of the agent's language.
    if (update.language !== undefined || update.voiceId !== undefined) {
      const voiceId = update.voiceId ?? locked.voiceId;
      const mismatch = voiceLanguageMismatch(update.language ?? locked.language, voiceId);
      if (mismatch)
        throw new ZodError([
          {
            code: 'custom',
            path: [update.voiceId !== undefined ? 'voiceId' : 'language'],
            message: mismatch,
            input: update.voiceId ?? update.language,
          },
        ]);
    }
    await checkAgentReferences(tx, principal.workspaceId, update);
    return updateAgentRow(tx, locked.id, settings, dictionaryIds);
  });
  return agentView(agent);
}

/**
 * Soft-deletes an agent unless a live campaign (RUNNING or PAUSED, not deleted) uses it (as its agent,
 * or in a call node of its published journey) or a phone number
 * routes inbound calls to it: 409 agent_in_use naming them. The agent's row is locked FOR UPDATE first,
 * so a campaign starting with it, a campaign or a number being pointed at it (FOR SHARE in their own
 * transactions) either committed before and is seen here, or waits and then finds the agent gone.
 */
export async function deleteAgent({ db }: AppServices, principal: Principal, id: string): Promise<void> {
  const { workspaceId } = principal;
  await db.$transaction(async (tx) => {
    const agent = await lockOwnedAgent(tx, principal, id);
    const { campaignIds, phoneNumberIds } = await usersOfAgent(tx, workspaceId, agent.id);
    if (campaignIds.length || phoneNumberIds.length)
      throw new Refusal(ErrorCode.agent_in_use, { campaignIds, phoneNumberIds });
    await markAgentDeleted(tx, agent.id);
  });
}
