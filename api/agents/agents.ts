import { Prisma } from '../../generated/prisma/client';
import {
  AGENT_LIMITS,
  type AgentScript,
  type AgentUpdate,
  type ExtractionField,
  type NewAgent,
} from '../../lib/agents/agent-definition';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { checkAgentReferences } from './agent-references';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { createWithinQuota } from '../campaigns/workspace-quota';

/** What the view of an agent reads besides its row: its dictionaries in order, its documents as linked. */
const AGENT_LINKS = {
  dictionaries: { select: { dictionaryId: true }, orderBy: { position: 'asc' } },
  documents: { select: { documentId: true }, orderBy: [{ linkedAt: 'asc' }, { documentId: 'asc' }] },
} satisfies Prisma.AgentInclude;

type AgentWithLinks = Prisma.AgentGetPayload<{ include: typeof AGENT_LINKS }>;

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
    voicemailMessage: agent.voicemailMessage,
    instructions: agent.instructions,
    firstMessage: agent.firstMessage,
    transferNumber: agent.transferNumber,
    documentIds: agent.documents.map((link) => link.documentId),
    createdAt: agent.createdAt.toISOString(),
    updatedAt: agent.updatedAt.toISOString(),
  };
}

export async function listAgents({ db }: AppServices, principal: Principal) {
  const agents = await db.agent.findMany({
    where: { workspaceId: principal.workspaceId, deletedAt: null },
    include: AGENT_LINKS,
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
  return agents.map(agentView);
}

/** A live agent of the caller's workspace; unknown, deleted and another workspace's are the same 403. */
export async function findOwnedAgent({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => db.agent.findFirst({ where: { ...where, deletedAt: null } }));
}

export async function getAgent({ db }: AppServices, principal: Principal, id: string) {
  return agentView(
    await findOwned(principal, id, (where) =>
      db.agent.findFirst({ where: { ...where, deletedAt: null }, include: AGENT_LINKS }),
    ),
  );
}

/**
 * Locks a live agent of the caller's workspace FOR UPDATE until the transaction ends: edits, link
 * changes and the delete of one agent run one at a time, and a delete waits for every FOR SHARE holder
 * (lib/agents/agent-lock.ts) before it reads what uses the agent.
 */
export async function lockOwnedAgent(tx: Prisma.TransactionClient, principal: Principal, id: string) {
  return findOwned(principal, id, async (where) => {
    const rows = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id::text AS id FROM "Agent"
       WHERE id = ${where.id}::uuid AND "workspaceId" = ${where.workspaceId}::uuid AND "deletedAt" IS NULL
         FOR UPDATE`;
    return rows[0];
  });
}

const dictionaryLinks = (dictionaryIds: readonly string[]) =>
  dictionaryIds.map((dictionaryId, position) => ({ dictionaryId, position }));

/** The agent's row and its dictionaries in one transaction, after checking and locking what it names. */
export async function createAgent({ db }: AppServices, principal: Principal, input: NewAgent) {
  const { dictionaryIds, ...settings } = input;
  const { workspaceId } = principal;
  const quota = {
    workspaceId,
    noun: 'agents',
    limit: AGENT_LIMITS.agentsPerWorkspace,
    code: ErrorCode.agent_limit_reached,
    // Deleted agents are kept (deletedAt) but hold no place.
    count: (tx: Prisma.TransactionClient) => tx.agent.count({ where: { workspaceId, deletedAt: null } }),
  };
  const agent = await createWithinQuota(db, quota, async (tx) => {
    await checkAgentReferences(tx, workspaceId, input);
    return tx.agent.create({
      data: { ...settings, workspaceId, dictionaries: { create: dictionaryLinks(dictionaryIds) } },
      include: AGENT_LINKS,
    });
  });
  return agentView(agent);
}

/** Replaces each setting given (dictionaryIds as a whole list, in its new order); nothing changes on a refusal. */
export async function updateAgent({ db }: AppServices, principal: Principal, id: string, update: AgentUpdate) {
  const { dictionaryIds, ...settings } = update;
  const agent = await db.$transaction(async (tx) => {
    const locked = await lockOwnedAgent(tx, principal, id);
    await checkAgentReferences(tx, principal.workspaceId, update);
    if (dictionaryIds) {
      await tx.agentDictionary.deleteMany({ where: { agentId: locked.id } });
      await tx.agentDictionary.createMany({
        data: dictionaryLinks(dictionaryIds).map((link) => ({ ...link, agentId: locked.id })),
      });
    }
    // updatedAt set even when only the dictionaries changed (the row itself would not be written).
    return tx.agent.update({
      where: { id: locked.id },
      data: { ...settings, updatedAt: new Date() },
      include: AGENT_LINKS,
    });
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
    const ownAgent = await tx.campaign.findMany({
      where: { workspaceId, agentId: agent.id, status: { in: ['RUNNING', 'PAUSED'] }, deletedAt: null },
      select: { id: true },
    });
    // JOURNEY campaigns whose published journey has a call node naming the agent.
    const callNodes = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT c.id::text AS id
        FROM "Campaign" c
        JOIN "Workflow" j ON j.id = c."workflowId"
        JOIN "WorkflowRevision" r ON r."workflowId" = j.id AND r.revision = j."publishedRevision"
       WHERE c."workspaceId" = ${workspaceId}::uuid AND c.status::text IN ('RUNNING', 'PAUSED') AND c."deletedAt" IS NULL
         AND r.definition -> 'nodes' @> ${JSON.stringify([{ type: 'call', data: { agentId: agent.id } }])}::jsonb`;
    const campaigns = [...new Set([...ownAgent, ...callNodes].map((campaign) => campaign.id))]
      .sort()
      .map((campaignId) => ({ id: campaignId }));
    const numbers = await tx.phoneNumber.findMany({
      where: { workspaceId, inboundAgentId: agent.id },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    if (campaigns.length || numbers.length)
      throw new Refusal(ErrorCode.agent_in_use, {
        campaignIds: campaigns.map((campaign) => campaign.id),
        phoneNumberIds: numbers.map((number) => number.id),
      });
    await tx.agent.update({ where: { id: agent.id }, data: { deletedAt: new Date() } });
  });
}
