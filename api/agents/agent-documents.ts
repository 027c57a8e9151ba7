import { ZodError } from 'zod';
import type { Principal } from '../door/principal';
import { missingRowIssues } from './agent-references';
import { findOwnedAgent, lockOwnedAgent } from './agents';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';

/** The documents an agent uses, as linked (oldest link first). */
async function linkedDocuments(db: AppServices['db'], agentId: string) {
  const links = await db.agentDocument.findMany({
    where: { agentId },
    include: {
      document: { select: { id: true, knowledgeBaseId: true, title: true, format: true, charCount: true } },
    },
    orderBy: [{ linkedAt: 'asc' }, { documentId: 'asc' }],
  });
  return links.map(({ document, linkedAt }) => ({ ...document, linkedAt: linkedAt.toISOString() }));
}

export async function listAgentDocuments(services: AppServices, principal: Principal, agentId: string) {
  const agent = await findOwnedAgent(services, principal, agentId);
  return linkedDocuments(services.db, agent.id);
}

/**
 * Makes the agent's documents exactly `documentIds`: links kept keep their linkedAt, the others are
 * removed, the new ones linked now. Every id must be a document of the workspace (400 naming each that
 * is not, nothing changed); the documents are locked so that one deleted meanwhile is either refused
 * here or unlinked by its own delete.
 */
export async function replaceAgentDocuments(
  services: AppServices,
  principal: Principal,
  agentId: string,
  documentIds: string[],
) {
  const agent = await services.db.$transaction(async (tx) => {
    const locked = await lockOwnedAgent(tx, principal, agentId);
    const issues = await missingRowIssues(
      tx,
      'KnowledgeDocument',
      principal.workspaceId,
      'documentIds',
      documentIds,
      'document',
    );
    if (issues.length) throw new ZodError(issues);
    await tx.agentDocument.deleteMany({ where: { agentId: locked.id, documentId: { notIn: documentIds } } });
    await tx.agentDocument.createMany({
      data: documentIds.map((documentId) => ({ agentId: locked.id, documentId })),
      skipDuplicates: true,
    });
    await tx.agent.update({ where: { id: locked.id }, data: { updatedAt: new Date() } });
    return locked;
  });
  return linkedDocuments(services.db, agent.id);
}

/**
 * Unlinks one document of the workspace from the agent. A document of the workspace that is not linked
 * is already unlinked (204); one that is not the workspace's is the same 403 as an unknown agent.
 */
export async function unlinkAgentDocument(
  services: AppServices,
  principal: Principal,
  agentId: string,
  documentId: string,
) {
  const agent = await findOwnedAgent(services, principal, agentId);
  const document = await findOwned(principal, documentId, (where) =>
    services.db.knowledgeDocument.findFirst({ where, select: { id: true } }),
  );
  const { count } = await services.db.agentDocument.deleteMany({
    where: { agentId: agent.id, documentId: document.id },
  });
  if (count) await services.db.agent.update({ where: { id: agent.id }, data: { updatedAt: new Date() } });
}
