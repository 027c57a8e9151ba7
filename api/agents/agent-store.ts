import { Prisma } from '../../generated/prisma/client';
import type { AgentUpdate, NewAgent } from '../../lib/agents/agent-definition';
import type { AppServices } from '../app-services';

/**
 * The agents API's SQL (docs/features/agents.md): agents with their dictionaries and documents, the locks that order
 * their writes, and what uses an agent. `where` is findOwned's (api/http/owned.ts).
 */

type Db = AppServices['db'];
type Tx = Prisma.TransactionClient;
type OwnedWhere = { id: string; workspaceId: string };

/** What the view of an agent reads besides its row: its dictionaries in order, its documents as linked. */
const AGENT_LINKS = {
  dictionaries: { select: { dictionaryId: true }, orderBy: { position: 'asc' } },
  documents: { select: { documentId: true }, orderBy: [{ linkedAt: 'asc' }, { documentId: 'asc' }] },
} satisfies Prisma.AgentInclude;

export type AgentWithLinks = Prisma.AgentGetPayload<{ include: typeof AGENT_LINKS }>;

export async function liveAgentsOfWorkspace(db: Db, workspaceId: string): Promise<AgentWithLinks[]> {
  return db.agent.findMany({
    where: { workspaceId, deletedAt: null },
    include: AGENT_LINKS,
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
}

export async function liveAgentWhere(db: Db, where: OwnedWhere) {
  return db.agent.findFirst({ where: { ...where, deletedAt: null } });
}

export async function liveAgentWithLinksWhere(db: Db, where: OwnedWhere): Promise<AgentWithLinks | null> {
  return db.agent.findFirst({ where: { ...where, deletedAt: null }, include: AGENT_LINKS });
}

/** The live agent's row (its id, language and voice), locked FOR UPDATE until the transaction ends; undefined: none. */
export async function lockLiveAgentRow(
  tx: Tx,
  where: OwnedWhere,
): Promise<{ id: string; language: string; voiceId: string } | undefined> {
  const rows = await tx.$queryRaw<Array<{ id: string; language: string; voiceId: string }>>`
      SELECT id::text AS id, language, "voiceId" FROM "Agent"
       WHERE id = ${where.id}::uuid AND "workspaceId" = ${where.workspaceId}::uuid AND "deletedAt" IS NULL
         FOR UPDATE`;
  return rows[0];
}

/** Deleted agents are kept (deletedAt) but hold no place. */
export async function liveAgentCount(tx: Tx, workspaceId: string): Promise<number> {
  return tx.agent.count({ where: { workspaceId, deletedAt: null } });
}

const dictionaryLinks = (dictionaryIds: readonly string[]) =>
  dictionaryIds.map((dictionaryId, position) => ({ dictionaryId, position }));

/** The agent's row and its dictionaries, in this order. */
export async function insertAgent(
  tx: Tx,
  workspaceId: string,
  settings: Omit<NewAgent, 'dictionaryIds'>,
  dictionaryIds: readonly string[],
): Promise<AgentWithLinks> {
  return tx.agent.create({
    data: { ...settings, workspaceId, dictionaries: { create: dictionaryLinks(dictionaryIds) } },
    include: AGENT_LINKS,
  });
}

/**
 * Each setting given written, the dictionaries (when given) replaced as a whole list in their new order; updatedAt
 * set even when only the dictionaries changed (the row itself would not be written).
 */
export async function updateAgentRow(
  tx: Tx,
  agentId: string,
  settings: Omit<AgentUpdate, 'dictionaryIds'>,
  dictionaryIds: readonly string[] | undefined,
): Promise<AgentWithLinks> {
  if (dictionaryIds) {
    await tx.agentDictionary.deleteMany({ where: { agentId } });
    await tx.agentDictionary.createMany({
      data: dictionaryLinks(dictionaryIds).map((link) => ({ ...link, agentId })),
    });
  }
  return tx.agent.update({
    where: { id: agentId },
    data: { ...settings, updatedAt: new Date() },
    include: AGENT_LINKS,
  });
}

/**
 * The live campaigns (RUNNING or PAUSED, not deleted) that use the agent, as their agent or in a call node of their
 * published journey, in id order; and the numbers that route inbound calls to it.
 */
export async function usersOfAgent(tx: Tx, workspaceId: string, agentId: string) {
  const ownAgent = await tx.campaign.findMany({
    where: { workspaceId, agentId, status: { in: ['RUNNING', 'PAUSED'] }, deletedAt: null },
    select: { id: true },
  });
  // JOURNEY campaigns whose published journey has a call node naming the agent.
  const callNodes = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT c.id::text AS id
        FROM "Campaign" c
        JOIN "Workflow" j ON j.id = c."workflowId"
        JOIN "WorkflowRevision" r ON r."workflowId" = j.id AND r.revision = j."publishedRevision"
       WHERE c."workspaceId" = ${workspaceId}::uuid AND c.status::text IN ('RUNNING', 'PAUSED') AND c."deletedAt" IS NULL
         AND r.definition -> 'nodes' @> ${JSON.stringify([{ type: 'call', data: { agentId } }])}::jsonb`;
  const campaignIds = [...new Set([...ownAgent, ...callNodes].map((campaign) => campaign.id))].sort();
  const numbers = await tx.phoneNumber.findMany({
    where: { workspaceId, inboundAgentId: agentId },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  return { campaignIds, phoneNumberIds: numbers.map((number) => number.id) };
}

export async function markAgentDeleted(tx: Tx, agentId: string): Promise<void> {
  await tx.agent.update({ where: { id: agentId }, data: { deletedAt: new Date() } });
}

/** Tables whose rows an agent names, each row carrying its workspaceId. */
export type ReferencedTable = 'Dictionary' | 'KnowledgeDocument' | 'BackgroundAudio';

/**
 * The ids of `ids` that are rows of the workspace, locked FOR KEY SHARE until the transaction ends: a
 * concurrent delete of one waits for the write that names it (and its cascade then removes the link), or
 * has already happened and the row is not found. Ids are lower-case UUIDs (the schemas make them so).
 */
export async function lockedRowsOf(
  tx: Tx,
  table: ReferencedTable,
  workspaceId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text AS id FROM ${Prisma.raw(`"${table}"`)}
     WHERE id = ANY(${[...ids]}::uuid[]) AND "workspaceId" = ${workspaceId}::uuid
       FOR KEY SHARE`;
  return new Set(rows.map((row) => row.id));
}

/** The documents an agent uses, as linked (oldest link first). */
export async function linkedDocumentsOf(db: Db, agentId: string) {
  return db.agentDocument.findMany({
    where: { agentId },
    include: {
      document: { select: { id: true, knowledgeBaseId: true, title: true, format: true, charCount: true } },
    },
    orderBy: [{ linkedAt: 'asc' }, { documentId: 'asc' }],
  });
}

/** The agent's documents become exactly these: links kept keep their linkedAt, the new ones are linked now. */
export async function replaceDocumentLinks(tx: Tx, agentId: string, documentIds: readonly string[]): Promise<void> {
  await tx.agentDocument.deleteMany({ where: { agentId, documentId: { notIn: [...documentIds] } } });
  await tx.agentDocument.createMany({
    data: documentIds.map((documentId) => ({ agentId, documentId })),
    skipDuplicates: true,
  });
  await tx.agent.update({ where: { id: agentId }, data: { updatedAt: new Date() } });
}

export async function documentIdWhere(db: Db, where: OwnedWhere) {
  return db.knowledgeDocument.findFirst({ where, select: { id: true } });
}

/** The link is removed, and the agent's updatedAt moves when there was one. */
export async function unlinkDocument(db: Db, agentId: string, documentId: string): Promise<void> {
  const { count } = await db.agentDocument.deleteMany({
    where: { agentId, documentId },
  });
  if (count) await db.agent.update({ where: { id: agentId }, data: { updatedAt: new Date() } });
}
