import { ZodError } from 'zod';
import type { Principal } from '../door/principal';
import { missingRowIssues } from './agent-references';
import { findOwnedAgent, lockOwnedAgent } from './agents';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { documentIdWhere, linkedDocumentsOf, replaceDocumentLinks, unlinkDocument } from './agent-store';

/** The documents an agent uses, as linked (oldest link first). */
async function linkedDocuments(db: AppServices['db'], agentId: string) {
  const links = await linkedDocumentsOf(db, agentId);
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
    await replaceDocumentLinks(tx, locked.id, documentIds);
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
  const document = await findOwned(principal, documentId, (where) => documentIdWhere(services.db, where));
  await unlinkDocument(services.db, agent.id, document.id);
}
